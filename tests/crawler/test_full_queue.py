"""A page that meets a full processor queue: it waits with its fetcher (blocking after
service), so every page is requested once; `full_queue = drop` keeps the paper's loss."""

from __future__ import annotations

from collections import Counter

import pytest
from prometheus_client import CollectorRegistry

from crawler.reporting.collection import status
from crawler.reporting.history import read_history
from crawler.reporting.report import summary
from policies import pool_policy_names
from tests.crawler.helpers import SEEN, collection, crawl, html, links, serving, site

PAGES = [f"/p{i}" for i in range(60)]
# pages slow to process next to their fetch: many words and links each
WORDS = " ".join(f"solar{i} panel{i} energy" for i in range(60))
FULL = {"buffer": 2, "concurrency": 16, "per_host_concurrency": 16}


def slow_site():  # type: ignore[no-untyped-def]
    page = html(links(*PAGES, words=WORDS))
    return site({"/": page, **{path: page for path in PAGES}})


@pytest.mark.parametrize("policy", pool_policy_names())
async def test_a_page_meeting_a_full_queue_waits_and_every_page_is_requested_once(
    db_url: str, policy: str
) -> None:
    registry = CollectorRegistry()
    app = slow_site()
    async with serving(app) as base:
        await crawl(db_url, [base], registry=registry, fetchers=policy, **FULL)

    def value(name: str) -> float:
        return registry.get_sample_value(name) or 0.0

    stored = await collection(db_url)
    asked = Counter(app[SEEN].paths())
    assert len(stored) == len(PAGES) + 1
    assert {path: n for path, n in asked.items() if n != 1} == {}  # robots.txt included
    assert value("crawler_fetches_blocked_total") > 0  # the queue was full, and pages waited
    assert value("crawler_fetchers_blocked_seconds_total") > 0
    assert value("crawler_fetch_losses_total") == 0
    assert value("crawler_requests_total") == sum(asked.values())
    # the figure `crawler status` and `crawler report` give: one request a page and robots.txt
    per_page = sum(asked.values()) / len(stored)
    assert (await status(db_url)).requests_per_page == pytest.approx(per_page)
    assert summary(await read_history(db_url))["HTTP requests per page stored"] == round(
        per_page, 3
    )


async def test_with_full_queue_drop_a_page_meeting_a_full_queue_is_fetched_again(
    db_url: str,
) -> None:
    registry = CollectorRegistry()
    app = slow_site()
    async with serving(app) as base:
        await crawl(db_url, [base], registry=registry, full_queue="drop", **FULL)
    stored = await collection(db_url)
    losses = registry.get_sample_value("crawler_fetch_losses_total") or 0.0
    page_requests = [path for path in app[SEEN].paths() if path != "/robots.txt"]
    assert losses > 0
    assert len(stored) == len(PAGES) + 1  # nothing lost...
    assert all(page.fetch_count == 1 for page in stored.values())  # ...nor stored twice
    assert len(page_requests) == len(stored) + losses  # every wasted fetch is counted
