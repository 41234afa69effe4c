"""What a commit tells the crawl: the frontier learns each stored page's relevance, takes
its new links and ranks higher the known ones it raised, the URLs under way are released
as stored, the re-visits see their sources. A sitemap's new URLs join the frontier
as a page's links do, with no page to learn from.

Only committed results come here (`StorageWriter.on_committed`), so the frontier never
holds a URL the database lacks.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import storage
from crawler.fetch.fetched_urls import FetchedUrls
from crawler.frontier.frontier_store import BoundedFrontier, candidate_of
from crawler.frontier.host_budget import is_page
from crawler.frontier.revisits import Revisits
from crawler.store.records import Committed, SitemapCommitted
from crawler.telemetry.metrics import CrawlerMetrics

# told each page fetched (its URL, its record) once its transaction has committed
OnStored = Callable[[str, storage.FetchRecord], None]


class CommitFeedback:
    def __init__(
        self,
        *,
        frontier: BoundedFrontier,
        fetched: FetchedUrls,
        revisits: Revisits,
        metrics: CrawlerMetrics,
        wake: asyncio.Event,
        on_stored: OnStored | None = None,
    ) -> None:
        self.frontier = frontier
        self.fetched = fetched
        self.revisits = revisits
        self.metrics = metrics
        self.wake = wake  # new URLs may be ready: the dispatcher looks again
        self.on_stored = on_stored  # a caller's: each page fetched, once committed

    def __call__(self, committed: list[Committed | SitemapCommitted]) -> None:
        pages = 0
        for item in committed:
            if isinstance(item, SitemapCommitted):
                for queued in item.new_urls:
                    self.frontier.push(candidate_of(queued, None))
                self.metrics.sitemap_urls.inc(len(item.new_urls))
                continue
            pages += 1
            candidate, record = item.write.candidate, item.write.record
            self.frontier.stored(candidate.url_id, page=record is None or is_page(record.status))
            self.frontier.drop(item.dropped)
            self.fetched.stored([candidate.url, *(hop.url for hop in item.write.reached)])
            contexts = item.write.contexts
            children = [candidate_of(queued, contexts.get(queued.url)) for queued in item.new_urls]
            relevance = 0.0 if record is None else record.relevance or 0.0
            if record is not None and record.near_duplicate_of is not None:
                relevance = 0.0  # a near-duplicate's relevance was the first page's reward
            self.frontier.on_fetched(candidate, relevance, children)
            for child in children:
                self.frontier.push(child)
            if item.raised and item.write.raise_known is not None:
                self.metrics.links_raised.inc(len(item.raised))
                self.frontier.raise_scores(item.raised, item.write.raise_known.score)
            self.metrics.links_discovered.inc(len(children))
            self._observe_revisit(item)
            if self.on_stored is not None and record is not None and record.error is None:
                self.on_stored(candidate.url, record)
        self.metrics.pages_stored.inc(pages)
        self.wake.set()

    def _observe_revisit(self, item: Committed) -> None:
        use = "revisit" if item.write.candidate.revisit else "discovery"
        self.metrics.fetches_by_use.labels(use=use).inc()
        if not self.revisits.settings.enabled:
            return
        found = self.revisits.committed(item)
        if found is not None:
            self.metrics.revisits.labels(result=found.result).inc()
            self.metrics.revisit_new_items.inc(found.new_items)
        self.metrics.sources.set(len(self.revisits.sources))
