"""One set of counts: the end-of-run summary, `status`, the report and the metrics agree,
and a redirect to a page fetched already is not an error."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
from collections import Counter

import numpy as np
import pytest
from prometheus_client import CollectorRegistry

import storage
from crawler.cli import main
from crawler.cli.crawl import format_summary
from crawler.counts import Counts
from crawler.reporting.collection import format_status, status, status_counts
from crawler.reporting.history import CrawlHistory, read_history
from crawler.reporting.report import summary as report_summary
from crawler.reporting.units import duration
from crawler.summary import CrawlSummary
from tests.crawler.helpers import SEEN, crawl, html, links, redirect, serving, site


async def test_the_summary_status_report_and_metrics_count_the_same_pages(db_url: str) -> None:
    app = site(
        {
            "/": html(links("/a", "/missing")),
            "/a": html(links("/r", "/b")),
            "/r": redirect("/"),  # to the seed, fetched already
            "/b": html(links()),
        }
    )
    registry = CollectorRegistry()
    async with serving(app) as base:
        run = await crawl(db_url, [base], registry=registry)
    assert app[SEEN].paths().count("/") == 1  # the redirect's target is not asked again

    assert run.relevant > 0
    expected = Counts(
        visited=5, pages=3, relevant=run.relevant, redirects_to_fetched=1, errors={"http_error": 1}
    )
    assert Counts.of(run.outcomes, relevant=run.relevant) == expected
    report = await status(db_url)
    assert status_counts(report) == expected
    as_json = json.loads(await asyncio.to_thread(_printed, ["status", "--db", db_url, "--json"]))
    assert as_json["errors"] == {"http_error": 1}
    assert (as_json["pages"], as_json["redirects_to_fetched"]) == (3, 1)
    history = await read_history(db_url)
    assert report_summary(history)["pages fetched"] == 3
    assert registry.get_sample_value("crawler_pages_fetched_total") == 3

    printed = format_summary(run)
    text = format_status(report)
    for shown in (printed, text):
        assert "pages fetched" in shown
        assert "redirects to pages fetched already" in shown
        assert "duplicate" not in shown  # not an error
    assert "http_error" in text


def test_the_summary_after_a_signal_says_why_in_words() -> None:
    printed = format_summary(CrawlSummary(stop_reason="stopped", seconds=61.0))
    assert "stopped: stopped" not in printed
    assert "asked to stop" in printed
    assert "1.0 min" in printed


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [(0.4, "0.4 s"), (42, "42 s"), (65, "1.1 min"), (5400, "1.5 h"), (3 * 86400, "3.0 days")],
)
def test_a_duration_reads_in_its_unit(seconds: float, shown: str) -> None:
    assert duration(seconds) == shown


def test_the_report_gives_its_span_in_words_and_relevance_in_three_digits() -> None:
    history = CrawlHistory(
        topic="solar",
        relevance_threshold=0.1 + 0.2,
        urls=["http://a/", "http://a/b"],
        fetched_at=np.array([1000.0, 1066.0]),
        relevance=np.array([0.5, 0.1]),
        outcomes=Counter({"ok": 2}),
        timeline=[],
    )
    facts = report_summary(history)
    assert facts["time from first to last fetch"] == "1.1 min"
    assert facts["relevance threshold"] == "0.300"
    assert not any("hours" in key for key in facts)


def test_status_says_nothing_of_re_visits_without_sources() -> None:
    report = storage.CrawlStatus(
        pages=3, relevant_pages=1, relevance_threshold=0.1 + 0.2, frontier=0, hosts=1
    )
    text = format_status(report)
    assert "visit" not in text.replace("URLs visited", "")
    assert "sources" not in text
    assert "0.300" in text
    assert "0.30000000000000004" not in text


def _printed(argv: list[str]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(argv) == 0
    return out.getvalue()
