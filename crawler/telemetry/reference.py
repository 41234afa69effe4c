"""The metrics reference (docs/metrics.md's table), made from the metrics' own
declarations (`crawler.telemetry.metrics`) so that it cannot drift from them:
`python -m crawler.telemetry.reference` prints it."""

from __future__ import annotations

from prometheus_client import CollectorRegistry

from crawler.telemetry.metrics import CrawlerMetrics

TABLE_START = "<!-- metrics table: made by `python -m crawler.telemetry.reference` -->"
TABLE_END = "<!-- end of the metrics table -->"
# how each kind of family is exposed: a counter's samples end in _total, an info's in _info
SUFFIX = {"counter": "_total", "info": "_info"}


def metrics_table() -> str:
    """Every metric the crawler declares, in Markdown: its exposed name, type, labels and
    help, in the order declared."""
    registry = CollectorRegistry()
    CrawlerMetrics(registry, version="reference")
    lines = [
        TABLE_START,
        "",
        "| metric | type | labels | meaning |",
        "| --- | --- | --- | --- |",
    ]
    for family in registry.collect():
        if family.name.startswith("process_"):  # the client library's own
            continue
        name = family.name + SUFFIX.get(family.type, "")
        labels = {label for sample in family.samples for label in sample.labels} - {"le"}
        shown = ", ".join(f"`{label}`" for label in sorted(labels))
        kind = "gauge" if family.type == "info" else family.type
        lines.append(f"| `{name}` | {kind} | {shown} | {family.documentation} |")
    return "\n".join([*lines, "", TABLE_END])


if __name__ == "__main__":
    print(metrics_table())
