"""A visit's fate once fetched, decided in one place: put back untried (its turn went to
robots.txt), tried again (its decision, crawler.fetch.deciding), lost at a full queue (only with
the paper's loss), or queued for the processor, waiting with its fetcher for room."""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

import storage
from crawler.fetch.exchange import Exchange
from crawler.fetch.fetched_urls import FetchedUrls
from crawler.fetch.robots import RobotsCache
from crawler.fetch.visit import Visit
from crawler.frontier.frontier_store import BoundedFrontier
from crawler.outcomes import Outcome
from crawler.process.processing import Processing
from crawler.settle.settle import Settlement
from crawler.store.writer import StorageWriter
from crawler.telemetry.metrics import CrawlerMetrics
from policies import BestFirst, Candidate
from tests.crawler.engine.helpers import (
    HOSTS,
    Clock,
    host_memory,
    html,
    page,
    queued,
    sample,
    settlement,
)

HOST = HOSTS[0]


@dataclass
class Parts:
    settlement: Settlement
    frontier: BoundedFrontier
    fetched: FetchedUrls
    robots: RobotsCache
    clock: Clock

    @property
    def processing(self) -> Processing:
        return self.settlement.processing

    @property
    def writer(self) -> StorageWriter:
        return self.settlement.writer

    async def dispatched(self, path: str) -> Candidate:
        """A URL queued, then taken from the frontier for a visit, as the dispatcher does."""
        (candidate,) = await queued(self.settlement.hosts.db, f"http://{HOST}/{path}")
        self.frontier.push(candidate)
        assert self.frontier.pop(lambda host: True) == candidate
        self.fetched.begin(candidate.url)
        return candidate

    def next(self) -> Candidate | None:
        return self.frontier.pop(lambda host: True)


def build(db: AsyncEngine, metrics: CrawlerMetrics, clock: Clock, *, drop: bool) -> Parts:
    hosts = host_memory(db, clock)
    frontier, fetched = BoundedFrontier(BestFirst(), capacity=100), FetchedUrls(db)
    settled = settlement(metrics, clock, hosts=hosts, fetched=fetched, frontier=frontier, drop=drop)
    return Parts(settled, frontier, fetched, hosts.robots, clock)


@pytest.fixture
def parts(db: AsyncEngine, metrics: CrawlerMetrics, clock: Clock) -> Parts:
    return build(db, metrics, clock, drop=False)


def answer(url: str, *, robots: bool = False, status: int = 200) -> Exchange:
    return Exchange(url, robots, 0.0, "/", (), "1.1", status, "OK", (), b"", False, False)


async def test_a_url_whose_turn_went_to_robots_txt_goes_back_untried(
    parts: Parts, metrics: CrawlerMetrics
) -> None:
    candidate = await parts.dispatched("page")
    visit = Visit(candidate, Outcome.ROBOTS_FIRST, candidate.url)
    assert not await parts.settlement.settle(visit, dispatched=parts.clock.now, fetching=1)
    assert parts.next() == candidate  # no try counted
    assert candidate.url not in parts.fetched
    assert sample(metrics, "crawler_fetches_total", outcome="robots_first") == 0
    assert parts.processing.length == 0


async def test_a_url_to_be_tried_again_goes_back_with_a_try_counted_and_its_answers_archived(
    parts: Parts, metrics: CrawlerMetrics
) -> None:
    candidate = await parts.dispatched("page")
    hop = f"http://{HOST}/moved"
    parts.fetched.begin(hop)  # a redirect's target the visit took on
    exchanges = (answer(hop, status=429),)
    throttled = Visit(
        candidate, Outcome.THROTTLED, hop, hops=(hop,), exchanges=exchanges, again=True
    )
    assert not await parts.settlement.settle(throttled, dispatched=parts.clock.now, fetching=1)
    assert parts.next() == dataclasses.replace(candidate, attempts=1)
    assert candidate.url not in parts.fetched
    assert hop not in parts.fetched
    assert sample(metrics, "crawler_fetches_total", outcome="throttled") == 1
    assert parts.writer.pending == 1  # its 429 is archived: the server sent it


async def test_a_url_decided_to_be_recorded_goes_to_the_processor_as_it_is(parts: Parts) -> None:
    candidate = await parts.dispatched("page")
    deferred = Visit(candidate, Outcome.DEFERRED, candidate.url)  # its tries spent
    assert await parts.settlement.settle(deferred, dispatched=parts.clock.now, fetching=1)
    recorded = parts.processing._responses.get_nowait()
    assert recorded is not None
    assert (recorded.outcome, recorded.candidate) == (Outcome.DEFERRED, candidate)


async def test_a_fetched_page_is_queued_and_the_pool_learns_the_fetchers_time(
    parts: Parts, metrics: CrawlerMetrics
) -> None:
    candidate = await parts.dispatched("page")
    dispatched = parts.clock.now
    parts.clock.now += 2.0
    visit = dataclasses.replace(page(candidate, html()), waited=0.5)  # not fetching meanwhile
    assert await parts.settlement.settle(visit, dispatched=dispatched, fetching=1)
    assert parts.processing.length == 1
    assert parts.settlement.pool.arrivals.overall.mean_duration_ == 1.5
    assert sample(metrics, "crawler_response_bytes_total") == len(html())


async def test_a_page_meeting_a_full_queue_waits_with_its_fetcher_for_room(
    parts: Parts, metrics: CrawlerMetrics
) -> None:
    ahead, candidate = await parts.dispatched("ahead"), await parts.dispatched("page")
    parts.processing.put(page(ahead, html()))
    settling = asyncio.create_task(
        parts.settlement.settle(page(candidate, html()), dispatched=parts.clock.now, fetching=1)
    )
    for _ in range(5):
        await asyncio.sleep(0)
    assert not settling.done()
    parts.clock.now += 3.0
    async with asyncio.timeout(5):
        serving = asyncio.create_task(parts.processing.run(fetching=lambda: 1))
        assert await settling  # a server took the page ahead: room
        parts.processing.close()
        await serving
    assert sample(metrics, "crawler_fetches_blocked_total") == 1
    assert sample(metrics, "crawler_fetchers_blocked_seconds_total") == 3.0
    assert sample(metrics, "crawler_fetch_losses_total") == 0
    assert parts.next() is None  # never fetched again


async def test_with_the_papers_loss_a_page_meeting_a_full_queue_is_put_back(
    db: AsyncEngine, metrics: CrawlerMetrics, clock: Clock
) -> None:
    parts = build(db, metrics, clock, drop=True)
    ahead, candidate = await parts.dispatched("ahead"), await parts.dispatched("page")
    parts.processing.put(page(ahead, html()))
    visit = dataclasses.replace(page(candidate, html()), exchanges=(answer(candidate.url),))
    assert not await parts.settlement.settle(visit, dispatched=clock.now, fetching=1)
    assert sample(metrics, "crawler_fetch_losses_total") == 1
    assert parts.next() == candidate  # fetched again later, its tries as they were
    assert candidate.url not in parts.fetched
    assert parts.processing.length == 1
    assert parts.writer.pending == 1  # its answer is archived all the same


async def test_the_robots_txt_a_visit_fetched_is_saved_with_its_hosts_rules(
    parts: Parts,
) -> None:
    candidate = await parts.dispatched("page")
    robots_url = f"http://{HOST}/robots.txt"
    parts.robots.store(HOST, 200, "User-agent: *\nCrawl-delay: 3\n", parts.clock.wall())
    visit = Visit(
        candidate,
        Outcome.ROBOTS_FIRST,
        candidate.url,
        exchanges=(answer(robots_url, robots=True),),
        robots_fetched=(HOST,),
    )
    await parts.settlement.settle(visit, dispatched=parts.clock.now, fetching=1)
    parts.writer.close()
    await parts.writer.run()
    async with parts.settlement.hosts.db.connect() as connection:
        record = await storage.load_host(connection, HOST)
    assert record is not None
    assert record.robots_body == "User-agent: *\nCrawl-delay: 3\n"
