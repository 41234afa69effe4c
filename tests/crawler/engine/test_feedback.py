"""What a commit tells the crawl: the frontier learns the page's relevance, takes its new
links and ranks higher the queued ones a relevant page raised, its URL and its redirects'
targets are stored, and the re-visits see their sources. Pages are committed by a real
writer to SQLite, which calls `CommitFeedback` as the crawl's does."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncEngine

from crawler.config import CrawlConfig
from crawler.fetch.fetched_urls import FetchedUrls
from crawler.fetch.visit import Visit
from crawler.frontier.feedback import CommitFeedback
from crawler.frontier.frontier_store import BoundedFrontier
from crawler.frontier.revisits import Revisits
from crawler.net.scope import Scope
from crawler.process.processor import Processor
from crawler.store.writer import StorageWriter
from crawler.telemetry.metrics import CrawlerMetrics
from policies import BestFirst, Candidate, TopicScorer
from tests.crawler.engine.helpers import HOSTS, TOPIC, html, page, queued, sample

SITE = f"http://{HOSTS[0]}"


class Told(BestFirst):
    """Best-first, noting what each fetch taught it: (URL, relevance, children's URLs)."""

    def __init__(self) -> None:
        super().__init__()
        self.told: list[tuple[str, float, list[str]]] = []

    def on_fetched(
        self, candidate: Candidate, relevance: float, children: Sequence[Candidate]
    ) -> None:
        self.told.append((candidate.url, relevance, [child.url for child in children]))
        super().on_fetched(candidate, relevance, children)


@dataclass
class Crawl:
    db: AsyncEngine
    policy: Told
    frontier: BoundedFrontier
    fetched: FetchedUrls
    revisits: Revisits
    feedback: CommitFeedback
    processor: Processor

    async def dispatched(self, url: str, *, score: float = 0.5) -> Candidate:
        (candidate,) = await queued(self.db, url, score=score)
        return self.take(candidate)

    def take(self, candidate: Candidate) -> Candidate:
        """Queue `candidate` in the frontier and take it out for a visit."""
        self.frontier.push(candidate)
        assert self.frontier.pop(lambda host: True) == candidate
        self.fetched.begin(candidate.url)
        return candidate

    async def commit(self, *visits: Visit) -> None:
        """Process and commit these visits; the writer calls the feedback."""
        writer = StorageWriter(self.db, on_committed=self.feedback)
        for visit in visits:
            writer.put(self.processor.process(visit).write)
        writer.close()
        await writer.run()

    def queued(self) -> list[Candidate]:
        """The frontier's candidates, best first (taken out)."""
        taken = []
        while (candidate := self.frontier.pop(lambda host: True)) is not None:
            taken.append(candidate)
        return taken


def crawl(db: AsyncEngine, metrics: CrawlerMetrics, *, revisit: str = "off") -> Crawl:
    policy, fetched = Told(), FetchedUrls(db)
    frontier = BoundedFrontier(policy, capacity=100)
    revisits = Revisits(
        CrawlConfig(revisit=revisit).revisits, relevance_threshold=0.1, seeds=[f"{SITE}/"]
    )
    feedback = CommitFeedback(
        frontier=frontier, fetched=fetched, revisits=revisits, metrics=metrics, wake=asyncio.Event()
    )
    scope = Scope.of(HOSTS, None)
    processor = Processor(
        scorer=TopicScorer().fit([TOPIC]), scope=scope, store_text=False, relevance_threshold=0.1
    )
    return Crawl(db, policy, frontier, fetched, revisits, feedback, processor)


async def test_a_stored_page_teaches_the_frontier_and_gives_it_its_new_links(
    db: AsyncEngine, metrics: CrawlerMetrics
) -> None:
    crawled = crawl(db, metrics)
    seed = await crawled.dispatched(f"{SITE}/")
    await crawled.commit(page(seed, html("/a", "/b")))
    ((url, relevance, children),) = crawled.policy.told
    assert (url, children) == (seed.url, [f"{SITE}/a", f"{SITE}/b"])
    assert relevance > 0.1  # the page's, as stored
    assert crawled.frontier.busy_hosts() == set()  # the seed is no longer queued
    assert sorted(c.url for c in crawled.queued()) == [f"{SITE}/a", f"{SITE}/b"]
    assert seed.url not in crawled.fetched
    assert not await crawled.fetched.claim(seed.url)  # stored: no redirect fetches it again
    assert sample(metrics, "crawler_pages_stored_total") == 1
    assert sample(metrics, "crawler_links_discovered_total") == 2
    assert sample(metrics, "crawler_fetch_budget_used_total", use="discovery") == 1
    assert crawled.feedback.wake.is_set()


async def test_a_queued_url_a_redirect_reached_is_stored_and_never_dispatched(
    db: AsyncEngine, metrics: CrawlerMetrics
) -> None:
    crawled = crawl(db, metrics)
    seed = await crawled.dispatched(f"{SITE}/")
    (target,) = await queued(db, f"{SITE}/target")
    crawled.frontier.push(target)
    crawled.fetched.begin(target.url)  # claimed as the redirect's target
    moved = dataclasses.replace(page(seed, html()), final_url=target.url, hops=(target.url,))
    await crawled.commit(moved)
    assert crawled.queued() == []
    assert target.url not in crawled.fetched
    assert not await crawled.fetched.claim(target.url)


async def test_the_queued_links_of_a_relevant_page_rise_in_the_frontier(
    db: AsyncEngine, metrics: CrawlerMetrics
) -> None:
    crawled = crawl(db, metrics)
    poor, good = await queued(db, f"{SITE}/poor", f"{SITE}/good")
    crawled.take(poor)
    await crawled.commit(page(poor, html("/shared", words="weather report tuesday")))
    (shared,) = crawled.queued()
    crawled.frontier.put_back(shared)
    crawled.take(good)
    await crawled.commit(page(good, html("/shared")))  # a relevant page links to it too
    (raised,) = crawled.queued()
    assert raised.url_id == shared.url_id
    assert raised.score > shared.score
    assert sample(metrics, "crawler_links_raised_total") == 1


async def test_the_revisits_see_their_sources_committed(
    db: AsyncEngine, metrics: CrawlerMetrics
) -> None:
    crawled = crawl(db, metrics, revisit="whittle")
    seed = await crawled.dispatched(f"{SITE}/")
    await crawled.commit(page(seed, html("/a")))
    assert list(crawled.revisits.sources) == [seed.url_id]  # a seed is a source
    assert sample(metrics, "crawler_sources") == 1
    again = crawled.take(dataclasses.replace(seed, revisit=True))
    await crawled.commit(page(again, html("/a", "/new")))
    assert sample(metrics, "crawler_fetch_budget_used_total", use="revisit") == 1
    assert sample(metrics, "crawler_revisits_total", result="new_items") == 1
    assert sample(metrics, "crawler_revisit_new_items_total") == 1
