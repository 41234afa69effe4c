"""A visit's fate once its fetching is over, decided in one place: put back for its
host's next turn (its turn went to robots.txt or a sitemap, whose URLs go to the
writer with the host's record: not a page, nor counted as one), tried again later
(as its outcome's decision says, `crawler.fetch.deciding`), lost to a full processor queue
(only with `drop_at_full_queue`, Talim et al.'s loss), or queued for the processor, its
fetcher waiting for room if the queue is full (blocking after service).

The answers of a visit that no row will record (retried, lost) go to the WARC file all
the same: the server sent them. robots.txt answers go with their hosts' rules.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

from crawler.fetch.fetched_urls import FetchedUrls
from crawler.fetch.host_memory import HostMemory
from crawler.fetch.sitemaps import SitemapRead
from crawler.fetch.visit import Visit
from crawler.frontier.frontier_store import BoundedFrontier
from crawler.outcomes import Outcome
from crawler.process.pool_control import PoolControl
from crawler.process.processing import Processing
from crawler.process.visit_records import page_captures
from crawler.store.records import SitemapWrite, StateWrite
from crawler.store.writer import StorageWriter
from crawler.telemetry.metrics import CrawlerMetrics
from policies import Candidate


class Settlement:
    def __init__(
        self,
        *,
        frontier: BoundedFrontier,
        fetched: FetchedUrls,
        hosts: HostMemory,
        writer: StorageWriter,
        processing: Processing,
        pool: PoolControl,
        metrics: CrawlerMetrics,
        drop_at_full_queue: bool,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.frontier = frontier
        self.fetched = fetched
        self.hosts = hosts
        self.writer = writer
        self.processing = processing
        self.pool = pool
        self.metrics = metrics
        self.drop_at_full_queue = drop_at_full_queue
        self.clock = clock

    async def settle(self, visit: Visit, *, dispatched: float, fetching: int) -> bool:
        """Retry, lose or queue `visit`; whether it went to the processor."""
        candidate = visit.candidate
        if visit.response is not None:
            self.metrics.response_bytes.inc(visit.response.size)
        self._archive_robots(visit)
        if visit.outcome in (Outcome.ROBOTS_FIRST, Outcome.SITEMAP_FIRST):
            # not a try: the page was not asked for
            self.fetched.end([candidate.url])
            self.frontier.put_back(candidate, ahead=True)
            if visit.sitemap is not None:
                self._write_sitemap(visit.sitemap, candidate)
            return False
        if visit.again:
            self.metrics.observe_outcome(visit.outcome)
            self._archive_unstored(visit)
            self.fetched.end([candidate.url, *visit.hops])
            self.frontier.put_back(dataclasses.replace(candidate, attempts=candidate.attempts + 1))
            return False
        queue = self.processing.length
        busy = self.clock() - dispatched - visit.waited  # a fetcher's time on the page
        self.pool.arrival(candidate.host, busy, queue=queue, active=fetching)
        if self.processing.is_full:
            if self.drop_at_full_queue:
                self.pool.loss()  # fetched in vain; fetched again later
                self._archive_unstored(visit)
                self.fetched.end([candidate.url, *visit.hops])
                self.frontier.put_back(candidate)
                return False
            blocked = self.clock()
            await self.processing.wait_for_room()
            self.pool.blocked(self.clock() - blocked)
        self.processing.put(visit)
        return True

    def _archive_robots(self, visit: Visit) -> None:
        """The robots.txt answers a visit captured go to the WARC file in the same
        transaction as their hosts' rules: a resumed crawl that has the record has the
        rules, and does not ask for them (nor archive them) again."""
        robots = [exchange for exchange in visit.exchanges if exchange.robots]
        if robots:
            hosts = self.hosts.records(visit.robots_fetched)
            self.writer.put(StateWrite(hosts=hosts, captures=robots))

    def _write_sitemap(self, read: SitemapRead, candidate: Candidate) -> None:
        """A sitemap's URLs, one step deeper than the URL whose visit read it, and its
        host's record (what of its sitemaps is read), written in one transaction."""
        self.metrics.sitemaps.labels(result=read.result).inc()
        links = self.processing.processor.sitemap_links(
            read, depth=candidate.depth + 1, parent_score=candidate.score
        )
        hosts = self.hosts.records([read.host])
        self.hosts.saving(hosts, self.writer.put(SitemapWrite(links, hosts, read.captures)))

    def _archive_unstored(self, visit: Visit) -> None:
        """A page's answers that no row records (429s retried, a page lost to a full
        queue) are archived all the same: the server sent them."""
        captures = page_captures(visit)
        if captures:
            self.writer.put(StateWrite(captures=captures))
