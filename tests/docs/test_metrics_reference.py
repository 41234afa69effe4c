"""docs/metrics.md's table is the one the metrics' declarations make."""

from __future__ import annotations

from pathlib import Path

from crawler.telemetry.reference import metrics_table


def test_the_metrics_reference_is_the_one_the_code_makes() -> None:
    """Run `python -m crawler.telemetry.reference` and paste its output into
    docs/metrics.md when a metric changes."""
    text = (Path(__file__).parents[2] / "docs" / "metrics.md").read_text()
    table = metrics_table()
    assert table in text
    assert "| `crawler_pages_analysed_total` | counter | `where` |" in table
    assert "| `crawler_build_info` | gauge | `python`, `version` |" in table
    assert "process_" not in table  # the client library's own, described beside it
