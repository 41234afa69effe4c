"""Pages, queued URLs and readings for the tests of the engine's parts."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from sqlalchemy.ext.asyncio import AsyncEngine
from yarl import URL

import storage
from crawler.fetch.admission import Admission
from crawler.fetch.fetched_urls import FetchedUrls
from crawler.fetch.fetcher import Response
from crawler.fetch.host_memory import HostMemory
from crawler.fetch.politeness import Politeness
from crawler.fetch.robots import RobotsCache
from crawler.fetch.visit import Visit
from crawler.frontier.frontier_store import BoundedFrontier, candidate_of
from crawler.net.scope import Scope
from crawler.outcomes import Outcome
from crawler.process.pool_control import PoolControl
from crawler.process.processing import Processing
from crawler.process.processor import Processor
from crawler.settle.settle import Settlement
from crawler.store.writer import StorageWriter
from crawler.summary import CrawlSummary
from crawler.telemetry.metrics import CrawlerMetrics
from policies import Candidate, TopicScorer
from policies.pool.fetcher_pool import FixedPool

WALL = 1_700_000_000.0  # the wall clock at monotonic 0
TOPIC = "solar energy panels"
HOSTS = ("a.example", "b.example")  # the crawl's scope


class Clock:
    """The monotonic clock, moved by the test; `wall` is the wall clock beside it."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now

    def wall(self) -> float:
        return WALL + self.now


async def queued(db: AsyncEngine, *urls: str, score: float = 0.5) -> list[Candidate]:
    """These URLs queued in the database, as a crawl's seeds are; their candidates."""
    new = [storage.NewUrl(url, URL(url).host or "", 0, score) for url in urls]
    async with db.begin() as connection:
        return [candidate_of(row) for row in await storage.add_urls(connection, new)]


def response(url: str, body: str, *, status: int = 200, location: str | None = None) -> Response:
    """An HTML page's answer, as the fetcher gives it."""
    data = body.encode()
    return Response(
        URL(url), status, "text/html", "utf-8", location, None, None, data, False, len(data)
    )


def page(candidate: Candidate, body: str = "", outcome: Outcome = Outcome.OK) -> Visit:
    """A visit that fetched `body` as the HTML page at the candidate's URL."""
    answer = response(candidate.url, body)
    return Visit(candidate, outcome, candidate.url, answer, datetime.now(UTC), seconds=0.1)


def html(*hrefs: str, words: str = TOPIC) -> str:
    anchors = "".join(f'<a href="{href}">{words}</a>' for href in hrefs)
    return f"<html><head><title>{words}</title></head><body><p>{words}</p>{anchors}</body></html>"


def sample(metrics: CrawlerMetrics, name: str, **labels: str) -> float:
    return metrics.registry.get_sample_value(name, labels) or 0.0


def host_memory(db: AsyncEngine, clock: Clock, *, capacity: int = 10) -> HostMemory:
    """Per-host state in `db`, over politeness of a second's delay and robots.txt rules."""
    return HostMemory(
        db=db,
        politeness=Politeness(delay=1.0),
        robots=RobotsCache(user_agent="testbot", ttl=86_400.0, retry=600.0),
        capacity=capacity,
        clock=clock,
        wall_clock=clock.wall,
    )


def settlement(
    metrics: CrawlerMetrics,
    clock: Clock,
    *,
    hosts: HostMemory,
    fetched: FetchedUrls,
    frontier: BoundedFrontier,
    summary: CrawlSummary | None = None,
    buffer: int = 1,
    drop: bool = False,
) -> Settlement:
    """A settlement over a processor's queue of `buffer` places (K), not served, and a
    writer to `hosts`' database, not running."""
    admission = Admission(concurrency=1, target=1)
    pool = PoolControl(FixedPool(max_fetchers=1), metrics, admission, buffer=buffer, clock=clock)
    writer = StorageWriter(hosts.db, on_committed=lambda committed: None)
    scorer = TopicScorer().fit([TOPIC])
    scope = Scope.of(HOSTS, None)
    processing = Processing(
        processor=Processor(scorer=scorer, scope=scope, store_text=False, relevance_threshold=0.1),
        writer=writer,
        pool=pool,
        metrics=metrics,
        summary=summary or CrawlSummary(),
        buffer=buffer,
        relevance_threshold=0.1,
        wake=asyncio.Event(),
        clock=clock,
    )
    return Settlement(
        frontier=frontier,
        fetched=fetched,
        hosts=hosts,
        writer=writer,
        processing=processing,
        pool=pool,
        metrics=metrics,
        drop_at_full_queue=drop,
        clock=clock,
    )
