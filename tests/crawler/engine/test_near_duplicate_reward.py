"""A near-duplicate earns the frontier no reward: its relevance is stored, the frontier
is told 0 for it. Pages are committed by a
real writer to SQLite, which calls `CommitFeedback` as the crawl's does."""

from __future__ import annotations

import asyncio

from sqlalchemy.ext.asyncio import AsyncEngine

from crawler.config import CrawlConfig
from crawler.fetch.fetched_urls import FetchedUrls
from crawler.frontier.feedback import CommitFeedback
from crawler.frontier.frontier_store import BoundedFrontier
from crawler.frontier.revisits import Revisits
from crawler.net.scope import Scope
from crawler.process.near_duplicates import NearDuplicates
from crawler.process.processor import Processor
from crawler.store.writer import StorageWriter
from crawler.telemetry.metrics import CrawlerMetrics
from policies import TopicScorer
from tests.crawler.engine.helpers import HOSTS, TOPIC, page, queued
from tests.crawler.engine.test_feedback import Told
from tests.crawler.test_near_duplicates import prose

SITE = f"http://{HOSTS[0]}"


def solar_page(footer: str) -> str:
    return (
        f"<html><head><title>{TOPIC}</title></head><body><main><p>{TOPIC} {prose(11)}</p>"
        f"<p>{footer}</p></main></body></html>"
    )


async def test_a_near_duplicate_is_stored_with_its_relevance_and_teaches_the_frontier_0(
    db: AsyncEngine, metrics: CrawlerMetrics
) -> None:
    policy, fetched = Told(), FetchedUrls(db)
    frontier = BoundedFrontier(policy, capacity=100)
    feedback = CommitFeedback(
        frontier=frontier,
        fetched=fetched,
        revisits=Revisits(CrawlConfig(revisit="off").revisits, relevance_threshold=0.1, seeds=[]),
        metrics=metrics,
        wake=asyncio.Event(),
    )
    scorer = TopicScorer().fit([TOPIC])
    processor = Processor(
        scorer=scorer,
        scope=Scope.of(HOSTS, None),
        store_text=False,
        relevance_threshold=0.01,
        near_duplicates=NearDuplicates(distance=4, capacity=10),
    )
    first, copy = await queued(db, f"{SITE}/first", f"{SITE}/copy")
    writer = StorageWriter(db, on_committed=feedback)
    written = []
    for candidate, footer in ((first, "Monday."), (copy, "Tuesday, by Bob.")):
        frontier.push(candidate)
        assert frontier.pop(lambda host: True) == candidate
        fetched.begin(candidate.url)
        write = processor.process(page(candidate, solar_page(footer))).write
        written.append(write.record)
        writer.put(write)
    writer.close()
    await writer.run()
    original, repeat = written
    assert original is not None
    assert repeat is not None
    assert original.near_duplicate_of is None
    assert repeat.near_duplicate_of == first.url_id
    assert repeat.relevance is not None
    assert repeat.relevance > 0.01
    told = {url: relevance for url, relevance, _ in policy.told}
    assert told[first.url] > 0.01
    assert told[copy.url] == 0.0
