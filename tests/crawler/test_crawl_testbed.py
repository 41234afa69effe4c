"""Whole crawls of the synthetic web, checked against what it is known to hold."""

from __future__ import annotations

import asyncio
import sqlite3
from collections import Counter
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry

import storage
from testbed.server import ServerSpec, Testbed
from testbed.web import BROKEN, WebSpec
from tests.crawler.helpers import GaugeWatch, collection, crawl, reachable, stored


async def test_a_whole_crawl_fetches_every_reachable_page_once(db_url: str) -> None:
    registry = CollectorRegistry()
    async with Testbed(WebSpec(pages=400, hosts=3, seed=3)) as bed:
        summary = await crawl(
            db_url,
            bed.seeds,
            allowed_domains=tuple(bed.hostnames),
            concurrency=6,
            registry=registry,
        )
        served = list(bed.requests)
    pages = await collection(db_url)
    assert summary.stop_reason == "frontier exhausted"
    assert summary.frontier == 0
    covered = {p.final_url or p.url for p in pages.values()}
    missing = [page for page in reachable(bed) if bed.page_url(page) not in covered]
    assert missing == []
    assert all(p.fetch_count == 1 for p in pages.values())
    # counted at the server: every URL once, a page behind a redirect included
    asked = Counter((r.host, r.path) for r in served)
    assert [request for request, times in asked.items() if times > 1] == []
    duplicates = [p for p in pages.values() if p.error == "duplicate"]
    assert duplicates  # redirects to pages fetched already, not followed
    assert all(p.final_url in covered for p in duplicates)
    assert not [r for r in served if r.path.startswith("/private/")]
    robots_requests = [r for r in served if r.path == "/robots.txt"]
    assert len(robots_requests) == 3  # once per host
    broken = [p for p in reachable(bed) if bed.web.kind[p] == BROKEN]
    assert broken
    assert all(pages[bed.page_url(p)].error == "http_error" for p in broken)
    loops = [p for url, p in pages.items() if url.endswith("/loop/a")]
    assert loops
    assert all(p.error == "redirect_loop" for p in loops)
    privates = [p for url, p in pages.items() if "/private/" in url]
    assert privates
    assert all(p.error == "robots" for p in privates)
    redirected = [p for url, p in pages.items() if "/r/" in url]
    assert redirected
    assert all(p.final_url and "/p/" in p.final_url for p in redirected)
    ok = sum(1 for p in pages.values() if p.error is None)
    assert registry.get_sample_value("crawler_fetches_total", {"outcome": "ok"}) == ok
    assert registry.get_sample_value("crawler_pages_stored_total") == len(pages)


async def harvest(db_url: str, policy: str, budget: int) -> int:
    async with Testbed(WebSpec(pages=20_000, seed=0)) as bed:
        await crawl(
            db_url,
            bed.seeds,
            allowed_domains=tuple(bed.hostnames),
            policy=policy,
            max_pages=budget,
            concurrency=8,
        )
        truth = {bed.page_url(p): float(bed.web.relevance[p]) for p in range(20_000)}
    pages = await collection(db_url)
    assert len(pages) == budget
    return sum(1 for p in pages.values() if truth.get(p.final_url or p.url, 0.0) >= 0.4)


@pytest.mark.slow
async def test_best_first_finds_several_times_more_relevant_pages_than_breadth_first(
    tmp_path,
) -> None:
    # breadth-first harvests 242-244 of 2,000 pages whatever the machine's load; best-
    # first 853-872 on a quiet machine (3.5x), 721 (2.95x) under a full CI run's load,
    # when the writer lags and fewer links are known at each dispatch
    budget = 2000
    breadth = await harvest(f"sqlite+aiosqlite:///{tmp_path / 'bfs.db'}", "bfs", budget)
    best = await harvest(f"sqlite+aiosqlite:///{tmp_path / 'best.db'}", "best-first", budget)
    assert best >= 2.5 * breadth, (best, breadth)


async def test_a_second_run_resumes_where_the_first_stopped(db_url: str) -> None:
    async with Testbed(WebSpec(pages=300, hosts=2, seed=5)) as bed:
        first = await crawl(db_url, bed.seeds, allowed_domains=tuple(bed.hostnames), max_pages=40)
        after_first = await collection(db_url)
        requests_before = len(bed.requests)
        second = await crawl(db_url, bed.seeds, allowed_domains=tuple(bed.hostnames), max_pages=40)
        second_paths = [r.path for r in bed.requests[requests_before:]]
    after_second = await collection(db_url)
    assert (first.stop_reason, second.stop_reason) == ("max_pages", "max_pages")
    assert len(after_first) == 40
    assert len(after_second) == 80
    assert set(after_first) < set(after_second)
    assert all(p.fetch_count == 1 for p in after_second.values())
    assert "/robots.txt" not in second_paths  # robots.txt came from the database


@pytest.mark.slow
async def test_a_database_that_stops_accepting_writes_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "crawl.db"
    # slow pages, so that the writer is mostly idle and the lock can be taken
    async with Testbed(WebSpec(pages=400, hosts=2), ServerSpec(latency=0.1)) as bed:
        crawling = asyncio.create_task(
            crawl(
                f"sqlite+aiosqlite:///{path}",
                bed.seeds,
                allowed_domains=tuple(bed.hostnames),
                concurrency=2,
                db_outage_seconds=1.0,  # the lock is waited for, then given up on
            )
        )
        for _ in range(600):  # at most 30 s
            if crawling.done() or stored(path) >= 10:
                break
            await asyncio.sleep(0.05)
        # another process takes the write lock and keeps it
        blocker = sqlite3.connect(path, timeout=0.05)
        for _ in range(200):
            try:
                blocker.execute("BEGIN EXCLUSIVE")
                break
            except sqlite3.OperationalError:  # the crawler is writing: try again
                await asyncio.sleep(0.01)
        assert blocker.in_transaction
        try:
            with pytest.raises(storage.StorageError, match="cannot write to the database"):
                await asyncio.wait_for(crawling, 60)
        finally:
            blocker.rollback()
            blocker.close()
    assert stored(path) >= 10  # what was committed is still there


async def test_a_frontier_beyond_its_memory_waits_in_the_database(db_url: str) -> None:
    """With room for 20 URLs in memory, a crawl and its resumption still fetch every
    reachable page exactly once, and memory holds no more than 20, with the visits in
    flight that may come back (throttled, deferred, lost at a full queue)."""
    capacity, concurrency = 20, 6
    registry = CollectorRegistry()
    async with (
        Testbed(WebSpec(pages=400, hosts=3, seed=3)) as bed,
        GaugeWatch("crawler_frontier_in_memory", registry, every=0.005) as in_memory,
    ):
        settings = {
            "allowed_domains": tuple(bed.hostnames),
            "frontier_memory": capacity,
            "concurrency": concurrency,
        }
        first = await crawl(db_url, bed.seeds, max_pages=100, registry=registry, **settings)
        assert first.frontier > capacity  # the rest waited in the database
        in_memory.registry = registry = CollectorRegistry()
        second = await crawl(db_url, bed.seeds, registry=registry, **settings)
        served = list(bed.requests)
    assert second.stop_reason == "frontier exhausted"
    assert 0 < in_memory.most <= capacity + concurrency
    # counted at the server, over both runs: every URL once (robots.txt once a run)
    asked = Counter((r.host, r.path) for r in served if r.path != "/robots.txt")
    assert [request for request, times in asked.items() if times > 1] == []
    pages = await collection(db_url)
    covered = {p.final_url or p.url for p in pages.values()}
    assert [page for page in reachable(bed) if bed.page_url(page) not in covered] == []
    assert all(p.fetch_count == 1 for p in pages.values())
