"""The visits in flight: each a task of the engine's group that visits its URL and
settles it; a bug met on one URL is that URL's `internal_error`, the database away is
the crawl's end, and at shutdown the visits get a grace period, then are cancelled."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import warnings
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine
from yarl import URL

import storage
from crawler.engine.visits import Visits
from crawler.fetch.admission import Admission
from crawler.fetch.fetched_urls import FetchedUrls
from crawler.fetch.fetcher import Response
from crawler.fetch.host_turns import HostTurns
from crawler.fetch.politeness import Politeness
from crawler.fetch.visit import Visitor
from crawler.frontier.frontier_store import BoundedFrontier
from crawler.net.scope import Scope
from crawler.summary import CrawlSummary
from crawler.telemetry.metrics import CrawlerMetrics
from policies import BestFirst, Candidate
from tests.crawler.engine.helpers import (
    HOSTS,
    Clock,
    host_memory,
    html,
    queued,
    response,
    settlement,
)

# a PostgreSQL server that is not there: nothing listens on port 1 of loopback
AWAY = "postgresql+asyncpg://crawler@127.0.0.1:1/crawl"


class Fetcher:
    """The fetcher's seam: pages from memory. A page at /bug meets a bug, /slow never
    answers, and /moved redirects to /target."""

    def __init__(self) -> None:
        self.asked: list[str] = []
        self.never = asyncio.Event()

    async def get(self, url: URL, headers: Mapping[str, str] | None = None) -> Response:
        self.asked.append(str(url))
        if url.path == "/bug":
            raise RuntimeError("a bug")
        if url.path == "/slow":
            await self.never.wait()
        if url.path == "/moved":
            return response(str(url), "", status=301, location="/target")
        return response(str(url), html())


@dataclass
class Crawl:
    visits: Visits
    fetcher: Fetcher
    politeness: Politeness
    admission: Admission
    fetched: FetchedUrls
    summary: CrawlSummary
    clock: Clock

    def start(self, group: asyncio.TaskGroup, candidate: Candidate) -> None:
        """Dispatch `candidate`: take its host's turn, then start its visit."""
        self.politeness.start(candidate.host, self.clock.now)
        self.visits.start(group, candidate, now=self.clock.now)

    @property
    def queued_for_processing(self) -> int:
        return self.visits.settlement.processing.length


@pytest.fixture
def crawl(db: AsyncEngine, metrics: CrawlerMetrics, clock: Clock) -> Crawl:
    return build(db, metrics, clock, fetched=FetchedUrls(db))


def build(db: AsyncEngine, metrics: CrawlerMetrics, clock: Clock, *, fetched: FetchedUrls) -> Crawl:
    hosts = host_memory(db, clock)
    for host in HOSTS:  # their robots.txt known: no request for it
        hosts.robots.store(host, 200, "User-agent: *\nAllow: /\n", clock.wall())
    admission = Admission(concurrency=4, target=4)
    turns = HostTurns(politeness=hosts.politeness, hosts=hosts, admission=admission, clock=clock)
    fetcher = Fetcher()
    visitor = Visitor(
        fetcher=fetcher,  # type: ignore[arg-type]
        fetched=fetched,
        turns=turns,
        robots=hosts.robots,
        hosts=hosts,
        scope=Scope.of(HOSTS, None),
        max_redirects=5,
        max_retries=2,
        clock=clock,
        wall_clock=clock.wall,
    )
    frontier, summary = BoundedFrontier(BestFirst(), capacity=100), CrawlSummary()
    settled = settlement(
        metrics, clock, hosts=hosts, fetched=fetched, frontier=frontier, summary=summary, buffer=4
    )
    visits = Visits(
        visitor=visitor,
        admission=admission,
        settlement=settled,
        summary=summary,
        wake=asyncio.Event(),
    )
    return Crawl(visits, fetcher, hosts.politeness, admission, fetched, summary, clock)


@contextlib.asynccontextmanager
async def bounded() -> AsyncIterator[asyncio.TaskGroup]:
    """The engine's task group, for a few seconds at most."""
    async with asyncio.timeout(5), asyncio.TaskGroup() as group:
        yield group


async def candidates(db: AsyncEngine, *paths: str) -> list[Candidate]:
    """A URL queued on each host of HOSTS, in turn, at these paths."""
    return await queued(db, *(f"http://{HOSTS[n]}/{path}" for n, path in enumerate(paths)))


async def test_a_visit_runs_in_the_group_and_hands_its_page_to_the_processor(
    db: AsyncEngine, crawl: Crawl
) -> None:
    (candidate,) = await candidates(db, "page")
    async with bounded() as group:
        crawl.start(group, candidate)
        assert len(crawl.visits) == 1
        assert crawl.admission.visits == 1
        assert candidate.url in crawl.fetched  # no redirect may lead to it meanwhile
    assert crawl.fetcher.asked == [candidate.url]
    assert len(crawl.visits) == 0
    assert crawl.admission.visits == 0
    assert crawl.summary.fetched == 1
    assert crawl.queued_for_processing == 1
    assert crawl.politeness.ready_at(candidate.host) == crawl.clock.now + 1.0  # asked once
    assert crawl.visits.wake.is_set()  # the dispatcher looks again


async def test_a_bug_met_visiting_one_url_is_its_internal_error_and_the_rest_go_on(
    db: AsyncEngine, crawl: Crawl, caplog: pytest.LogCaptureFixture
) -> None:
    bug, fine = await candidates(db, "bug", "page")
    with caplog.at_level(logging.WARNING):
        async with bounded() as group:
            crawl.start(group, bug)
            crawl.start(group, fine)
    assert f"internal error visiting {bug.url}" in caplog.text
    assert crawl.summary.fetched == 2  # both recorded, the bug as internal_error
    processing = crawl.visits.settlement.processing
    processing.close()
    await processing.run(fetching=lambda: 0)
    assert crawl.summary.outcomes == {"internal_error": 1, "ok": 1}
    assert crawl.politeness.ready(bug.host, crawl.clock.now)  # its turn given back
    assert crawl.admission.visits == 0


async def test_the_database_away_ends_the_crawl_not_only_the_url(
    db: AsyncEngine, metrics: CrawlerMetrics, clock: Clock
) -> None:
    away = storage.open_engine(AWAY)
    try:
        crawl = build(db, metrics, clock, fetched=FetchedUrls(away))
        (moved,) = await candidates(db, "moved")  # its redirect's target is looked up
        with pytest.raises(ExceptionGroup) as failed:
            async with bounded() as group:
                crawl.start(group, moved)
    finally:
        await away.dispose()
    assert failed.group_contains(storage.DatabaseAway)
    assert crawl.admission.visits == 0
    assert crawl.politeness.slot(moved.host).in_flight == 0


async def test_visits_still_running_after_the_grace_period_are_cancelled(
    db: AsyncEngine, crawl: Crawl, caplog: pytest.LogCaptureFixture
) -> None:
    slow, fine = await candidates(db, "slow", "page")
    with caplog.at_level(logging.WARNING):
        async with bounded() as group:
            crawl.start(group, slow)
            crawl.start(group, fine)
            await crawl.visits.drain(0.05)
            assert len(crawl.visits) == 0
    assert "cancelled 1 visits still running after the grace period" in caplog.text
    assert crawl.summary.fetched == 1  # the other one finished
    assert crawl.admission.visits == 0
    assert crawl.politeness.ready(slow.host, crawl.clock.now)  # no answer: no delay owed


async def test_a_visit_started_in_a_group_that_has_ended_is_refused_and_never_runs(
    db: AsyncEngine, crawl: Crawl
) -> None:
    (candidate,) = await candidates(db, "page")
    async with asyncio.TaskGroup() as ended:
        pass
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError):
            crawl.visits.start(ended, candidate, now=crawl.clock.now)
        gc.collect()  # a coroutine never awaited says so when collected
    assert [str(w.message) for w in caught] == []
    assert crawl.admission.visits == 0
    assert crawl.fetcher.asked == []
