"""`crawler report`: a crawl drawn from its database, as one HTML file or PNG files.

What the crawl found first (`crawler.reporting.found`: its best pages, linked; relevant
pages by host), then the figures (`crawler.reporting.figures`): harvest over time, the
relevance histogram, fetch outcomes, politeness by host and the controllers' behaviour.
matplotlib is an optional extra: `pip install "topical-crawler[report]"`.
"""

from __future__ import annotations

import base64
import html
import io
from pathlib import Path
from typing import Any

import numpy as np

from crawler.counts import LABELS, Counts
from crawler.reporting.figures import figures, pyplot
from crawler.reporting.found import found_html
from crawler.reporting.history import CrawlHistory
from crawler.reporting.units import duration
from crawler.telemetry.timeline import requests_per_page
from policies.offline.quality import schedule_performance, upper_bound

DEFAULT_TRUTH_THRESHOLD = 0.4  # the testbed's: truly relevant at ground truth >= 0.4


def summary(
    history: CrawlHistory,
    truth: dict[str, float] | None = None,
    truth_threshold: float = DEFAULT_TRUTH_THRESHOLD,
) -> dict[str, Any]:
    scored = history.relevance[~np.isnan(history.relevance)]
    counts = Counts.of(
        history.outcomes, relevant=int(np.sum(scored >= history.relevance_threshold))
    )
    result: dict[str, Any] = {
        "topic": history.topic,
        LABELS["visited"]: counts.visited,
        LABELS["pages"]: counts.pages,
        f"{LABELS['relevant']} (score >= threshold)": counts.relevant,
        "relevance threshold": f"{history.relevance_threshold:.3f}",
        LABELS["redirects_to_fetched"]: counts.redirects_to_fetched,
        LABELS["canonical_variants"]: counts.canonical_variants,
        "runs": len({sample.values.get("run") for sample in history.timeline}),
    }
    per_page = requests_per_page(history.timeline)
    if per_page is not None:
        result["HTTP requests per page stored"] = round(per_page, 3)
    if len(history.fetched_at):
        result["time from first to last fetch"] = duration(
            float(history.fetched_at[-1] - history.fetched_at[0])
        )
    if truth is not None:
        fetched = history.truth(truth)
        relevance = np.fromiter(truth.values(), dtype=np.float64)
        result["truly relevant fetched"] = int(np.sum(fetched >= truth_threshold))
        result["truly relevant on the web"] = int(np.sum(relevance >= truth_threshold))
        bound = upper_bound(relevance, len(fetched))
        if bound > 0:
            performance = schedule_performance(fetched, float(relevance.sum()))
            result["P / upper bound"] = round(performance / bound, 4)
    return result


def write_report(
    history: CrawlHistory,
    out: Path,
    *,
    truth: dict[str, float] | None = None,
    truth_threshold: float = DEFAULT_TRUTH_THRESHOLD,
) -> list[Path]:
    """An HTML file if `out` ends in .html, else a directory of PNG files; the paths written."""
    plt = pyplot()
    # every label is text: a host name with `$` in it is not mathematics to typeset
    with plt.rc_context({"text.parse_math": False}):
        return _write_report(plt, history, out, truth, truth_threshold)


def _write_report(
    plt: Any,
    history: CrawlHistory,
    out: Path,
    truth: dict[str, float] | None,
    truth_threshold: float,
) -> list[Path]:
    drawn = figures(history, truth, truth_threshold)
    facts = summary(history, truth, truth_threshold)
    written = []
    if out.suffix.lower() == ".html":
        parts = [
            "<!doctype html><meta charset='utf-8'>",
            f"<title>Crawl report: {html.escape(history.topic)}</title>",
            "<style>body{font-family:sans-serif;max-width:1100px;margin:auto}"
            "td{padding:2px 12px}img{max-width:100%}</style>",
            f"<h1>Crawl report: {html.escape(history.topic)}</h1><table>",
            *(
                f"<tr><td>{html.escape(key)}</td><td>{html.escape(str(value))}</td></tr>"
                for key, value in facts.items()
            ),
            "</table>",
            *found_html(history),
        ]
        for name, (figure, caption) in drawn.items():
            buffer = io.BytesIO()
            figure.savefig(buffer, format="png", dpi=100)
            encoded = base64.b64encode(buffer.getvalue()).decode("ascii")
            parts.append(
                f"<h2>{html.escape(name)}</h2><p>{html.escape(caption)}</p>"
                f"<img alt='{html.escape(name)}' src='data:image/png;base64,{encoded}'>"
            )
        partial = out.with_name(out.name + ".partial")
        partial.write_text("\n".join(parts), encoding="utf-8")
        partial.replace(out)
        written.append(out)
    else:
        out.mkdir(parents=True, exist_ok=True)
        for name, (figure, _caption) in drawn.items():
            path = out / f"{name}.png"
            figure.savefig(path, dpi=100)
            written.append(path)
    for figure, _caption in drawn.values():
        plt.close(figure)
    return written
