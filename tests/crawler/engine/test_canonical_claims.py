"""The processor's queue claims a page's canonical URL between its analysis and its
score: the URL is under way until the page's write commits, and given up when the
page's processing fails, so that a later visit may still take it."""

from __future__ import annotations

import asyncio

from sqlalchemy.ext.asyncio import AsyncEngine

from crawler.fetch.admission import Admission
from crawler.fetch.fetched_urls import FetchedUrls
from crawler.fetch.visit import Visit
from crawler.net.scope import Scope
from crawler.outcomes import Outcome
from crawler.process.canonical import Canonical
from crawler.process.parse import PageAnalysis
from crawler.process.pool_control import PoolControl
from crawler.process.processing import Processing
from crawler.process.processor import Processed, Processor
from crawler.store.writer import StorageWriter
from crawler.summary import CrawlSummary
from crawler.telemetry.metrics import CrawlerMetrics
from policies import TopicScorer
from policies.pool.fetcher_pool import FixedPool
from tests.crawler.engine.helpers import TOPIC, page, queued

CANONICAL = "http://a.example/b"
HEAD = f'<html><head><title>{TOPIC}</title><link rel="canonical" href="/b"></head>'


class FailsOnCanonical(Processor):
    """A processor with a bug met while scoring a page stored under a canonical URL."""

    def score(
        self, visit: Visit, analysis: PageAnalysis | None, canonical: Canonical | None = None
    ) -> Processed:
        if canonical is not None:
            raise RuntimeError("a bug")
        return super().score(visit, analysis, canonical)


async def serve(
    db: AsyncEngine, metrics: CrawlerMetrics, processor: Processor, *paths: str
) -> tuple[FetchedUrls, CrawlSummary]:
    fetched, summary = FetchedUrls(db), CrawlSummary()
    writer = StorageWriter(db, on_committed=lambda items: None)
    pool = PoolControl(
        FixedPool(max_fetchers=1), metrics, Admission(concurrency=1, target=1), buffer=4
    )
    processing = Processing(
        processor=processor,
        writer=writer,
        pool=pool,
        metrics=metrics,
        summary=summary,
        buffer=4,
        relevance_threshold=0.1,
        wake=asyncio.Event(),
        fetched=fetched,
    )
    urls = [f"http://a.example/{path}" for path in paths]
    for candidate in await queued(db, *urls):
        processing.put(page(candidate, f"{HEAD}<body><p>{TOPIC}</p></body></html>"))
    processing.close()
    async with asyncio.timeout(5):
        await processing.run(fetching=lambda: 0)
    writer.close()
    await writer.run()
    return fetched, summary


async def test_a_page_whose_processing_fails_gives_up_its_canonical_url(
    db: AsyncEngine, metrics: CrawlerMetrics
) -> None:
    scorer = TopicScorer().fit([TOPIC])
    scope = Scope.of({"a.example"})
    processor = FailsOnCanonical(
        scorer=scorer, scope=scope, store_text=False, relevance_threshold=0.1
    )
    fetched, summary = await serve(db, metrics, processor, "a")
    assert summary.outcomes == {Outcome.INTERNAL_ERROR.value: 1}
    assert CANONICAL not in fetched
    assert await fetched.claim(CANONICAL)  # not reached: a later visit may fetch it


async def test_the_second_page_naming_a_claimed_url_is_its_variant(
    db: AsyncEngine, metrics: CrawlerMetrics
) -> None:
    scorer = TopicScorer().fit([TOPIC])
    scope = Scope.of({"a.example"})
    processor = Processor(scorer=scorer, scope=scope, store_text=False, relevance_threshold=0.1)
    fetched, summary = await serve(db, metrics, processor, "a", "a2")
    assert summary.outcomes == {Outcome.OK.value: 1, Outcome.CANONICAL_VARIANT.value: 1}
    assert CANONICAL in fetched  # under way until the commit tells the URLs fetched
    assert not await fetched.claim(CANONICAL)
