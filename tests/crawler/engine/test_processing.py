"""The processor's queue of K places, the pages in service included: a page meeting it
full waits for room (blocking after service, the first blocked first), its c servers
score the pages in the order they took them, and a page that raises is its URL's
`internal_error`, the others served on."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncEngine

import storage
from crawler.fetch.admission import Admission
from crawler.fetch.visit import Visit
from crawler.net.scope import Scope
from crawler.outcomes import Outcome
from crawler.process.analysis_pool import AnalysisJob, AnalysisPool
from crawler.process.pool_control import PoolControl
from crawler.process.processing import Processing
from crawler.process.processor import Processor
from crawler.store.writer import StorageWriter
from crawler.summary import CrawlSummary
from crawler.telemetry.metrics import CrawlerMetrics
from policies import TopicScorer
from policies.pool.fetcher_pool import FixedPool
from tests.crawler.engine.helpers import TOPIC, html, page, queued, sample

SCOPE = Scope.of({"a.example"}, None)


class QueueSeen(FixedPool):
    """The pool policy, noting the queue's length as each page leaves it."""

    def __init__(self) -> None:
        super().__init__(max_fetchers=1)
        self.departures: list[int] = []

    def on_departure(self, queue: int, active: int) -> int:
        self.departures.append(queue)
        return super().on_departure(queue, active)


class Faulty(Processor):
    """A processor with a bug met on the pages fetched from URLs ending in /bug, before
    their analysis (and so before their turn to be scored)."""

    def analysis_job(self, visit: Visit) -> AnalysisJob | None:
        if visit.outcome is Outcome.OK and visit.candidate.url.endswith("/bug"):
            raise RuntimeError("a bug")
        return super().analysis_job(visit)


@dataclass
class Line:
    """A processor's queue and servers, their writer committing to SQLite."""

    processing: Processing
    pool: QueueSeen
    summary: CrawlSummary
    written: list[str]  # URLs, in the order their pages were committed

    async def serve(self) -> None:
        """Serve what is queued, then commit it."""
        self.processing.close()
        async with asyncio.timeout(5):  # pages waiting for a turn that never comes
            await self.processing.run(fetching=lambda: 0)
        await self.commit()

    async def commit(self) -> None:
        writer = self.processing.writer
        writer.close()
        await writer.run()


def line(
    db: AsyncEngine,
    metrics: CrawlerMetrics,
    *,
    buffer: int,
    analysis: AnalysisPool | None = None,
) -> Line:
    scorer = TopicScorer().fit([TOPIC])
    processor = Faulty(scorer=scorer, scope=SCOPE, store_text=False, relevance_threshold=0.1)
    seen, summary, written = QueueSeen(), CrawlSummary(), []
    writer = StorageWriter(
        db, on_committed=lambda items: written.extend(i.write.candidate.url for i in items)
    )
    pool = PoolControl(seen, metrics, Admission(concurrency=1, target=1), buffer=buffer)
    processing = Processing(
        processor=processor,
        writer=writer,
        pool=pool,
        metrics=metrics,
        summary=summary,
        buffer=buffer,
        relevance_threshold=0.1,
        wake=asyncio.Event(),
        analysis=analysis,
    )
    return Line(processing, seen, summary, written)


async def pages(db: AsyncEngine, *paths: str, body: str = html()) -> list[Visit]:
    urls = [f"http://a.example/{path}" for path in paths]
    return [page(candidate, body) for candidate in await queued(db, *urls)]


async def test_the_queue_holds_k_pages_the_one_in_service_included(
    db: AsyncEngine, metrics: CrawlerMetrics
) -> None:
    served = line(db, metrics, buffer=2)
    processing = served.processing
    first, second = await pages(db, "1", "2")
    processing.put(first)
    assert (processing.length, processing.is_full) == (1, False)
    processing.put(second)
    assert (processing.length, processing.is_full) == (2, True)
    await served.serve()
    assert served.pool.departures == [2, 1]  # each page counted until it left
    assert processing.is_empty()
    assert served.written == [first.candidate.url, second.candidate.url]


async def test_a_page_meeting_a_full_queue_waits_for_room_the_first_blocked_first(
    db: AsyncEngine, metrics: CrawlerMetrics
) -> None:
    served = line(db, metrics, buffer=1)
    processing = served.processing
    ahead, *blocked = await pages(db, "ahead", "first", "second")
    processing.put(ahead)
    entered: list[tuple[str, int]] = []  # who entered, and the queue's length then

    async def blocked_fetcher(visit: Visit) -> None:
        await processing.wait_for_room()
        processing.put(visit)
        entered.append((visit.candidate.url, processing.length))

    waiters = []
    for visit in blocked:
        waiters.append(asyncio.create_task(blocked_fetcher(visit)))
        await asyncio.sleep(0)  # each begins to wait in turn
    await asyncio.sleep(0)
    assert entered == []  # the queue is full: they wait, their pages kept
    async with asyncio.timeout(5):
        serving = asyncio.create_task(processing.run(fetching=lambda: 0))
        await asyncio.gather(*waiters)
        processing.close()
        await serving
    await served.commit()
    assert entered == [(visit.candidate.url, 1) for visit in blocked]  # never beyond K
    assert served.written == [visit.candidate.url for visit in (ahead, *blocked)]


async def test_a_page_that_raises_is_its_urls_internal_error_the_others_served_on(
    db: AsyncEngine, metrics: CrawlerMetrics
) -> None:
    served = line(db, metrics, buffer=3)
    visits = await pages(db, "1", "bug", "3")
    for visit in visits:
        served.processing.put(visit)
    await served.serve()
    assert served.written == [visit.candidate.url for visit in visits]
    async with db.connect() as connection:
        errors = {row.url: row.error async for row in storage.iter_export(connection)}
    assert list(errors.values()) == [None, "internal_error", None]
    assert served.summary.outcomes == {"ok": 2, "internal_error": 1}
    assert sample(metrics, "crawler_fetches_total", outcome="internal_error") == 1
    assert served.summary.relevant == 2  # the pages scored, about the topic


async def test_several_servers_score_the_pages_in_the_order_they_took_them(
    db: AsyncEngine, metrics: CrawlerMetrics
) -> None:
    """The first page is large and slow to analyse; the small ones after it, analysed
    by the other worker sooner, wait for their turn to be scored, a failing one too."""
    large = html(*(f"/link/{n}" for n in range(3_000)), words=TOPIC + " " + "words " * 50)
    visits = await pages(db, "large", body=large)
    visits += await pages(db, "2", "bug", "4", "5")
    analysis = await AnalysisPool.start(2, TopicScorer().n_features, SCOPE)
    try:
        served = line(db, metrics, buffer=len(visits), analysis=analysis)
        for visit in visits:
            served.processing.put(visit)
        await served.serve()
    finally:
        await analysis.close()
    assert served.written == [visit.candidate.url for visit in visits]
    assert served.summary.outcomes == {"ok": 4, "internal_error": 1}
