"""The processor's queue of K places (Talim et al.'s buffer, the pages in service
included) and the c servers that serve it: analyse, score, and hand the result to the
writer.

With one processor (c = 1) each page is analysed and scored on the event loop. With c
processors, c servers each take a page and have it analysed in a worker process
(`crawler.process.analysis_pool`), or here if it is too small to be worth handing
over, then score it here, in the order the pages were taken: the learned state has one
owner and sees the pages in the queue's order, so the scores are those one processor
would give. A page that meets a full queue waits with its fetcher until a server frees
a place (blocking after service, `wait_for_room`): waiters enter in the order they
began to wait. The pool's statistics are told the busy and idle time its models count,
accrued from the pages' arrivals and departures (`ServerTime`): a page's time from its
taking to its score also holds its waits inside the processor (behind a worker's other
page, for its turn to be scored), which are not service.

A page that names another URL of its host as its canonical one
(`crawler.process.canonical`) claims it from the URLs fetched (`FetchedUrls.claim`)
between its analysis and its score, as a redirect claims its target: claimed, the page
is stored under it and the URL is under way until the page's write commits (or is
given up, if the page's processing fails); fetched or under way already, the page is
a variant of it.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
from collections.abc import Callable

from crawler.fetch.deciding import NO_TRIES_LEFT, Facts, decide
from crawler.fetch.fetched_urls import FetchedUrls
from crawler.fetch.visit import Visit
from crawler.outcomes import Outcome
from crawler.process import canonical
from crawler.process.analysis_pool import AnalysisJob, AnalysisPool, WorkerDiedError
from crawler.process.parse import PageAnalysis
from crawler.process.pool_control import PoolControl
from crawler.process.processor import UNREADABLE, Processor
from crawler.process.server_time import ServerTime
from crawler.store.writer import StorageWriter
from crawler.summary import CrawlSummary
from crawler.telemetry.metrics import CrawlerMetrics

log = logging.getLogger(__name__)

# pages a worker process is given at once: while the crawl's process scores one, the
# worker analyses the next
SERVERS_PER_WORKER = 2


class Processing:
    def __init__(
        self,
        *,
        processor: Processor,
        writer: StorageWriter,
        pool: PoolControl,
        metrics: CrawlerMetrics,
        summary: CrawlSummary,
        buffer: int,
        relevance_threshold: float,
        wake: asyncio.Event,
        analysis: AnalysisPool | None = None,
        fetched: FetchedUrls | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.processor = processor
        # the URLs fetched or under way, which canonical URLs are claimed from; None:
        # pages' canonical URLs are not taken
        self.fetched = fetched
        self.analysis = analysis  # None: pages are analysed on the event loop
        self.servers = 1 if analysis is None else analysis.workers
        self.writer = writer
        self.pool = pool
        self.metrics = metrics
        self.summary = summary
        self.buffer = buffer
        self.relevance_threshold = relevance_threshold
        self.wake = wake  # a place freed, a page done: the dispatcher looks again
        self.clock = clock
        # bounded here (K, the page in service included), not by the queue
        self._responses: asyncio.Queue[Visit | None] = asyncio.Queue()
        self._closed = False  # the queue ends with the servers' stop sign: not a page
        self._room = asyncio.Event()  # a server took a page: a blocked one may enter
        self._serving = 0
        self._taken = 0  # pages taken by a server, in the queue's order
        self._finished = 0  # pages scored, in the same order
        self._turn = asyncio.Event()  # a page was scored: the next in order may be
        self._server_time = ServerTime(self.servers, clock)

    @property
    def length(self) -> int:
        """Pages at the processor: waiting, and the one it is working on."""
        return self.waiting + self._serving

    @property
    def waiting(self) -> int:
        """Pages no server has taken yet."""
        return self._responses.qsize() - self._closed

    @property
    def is_full(self) -> bool:
        return self.length >= self.buffer

    def is_empty(self) -> bool:
        return self.length == 0

    def put(self, visit: Visit) -> None:
        self._server_time.arrival()
        self._responses.put_nowait(visit)

    def close(self) -> None:
        """No more pages: the servers end once those queued are served."""
        self._closed = True
        self._responses.put_nowait(None)  # each server passes it on to the next

    async def wait_for_room(self) -> None:
        """Hold the fetcher and its page until the queue has room (blocking after
        service): a page someone's server sent is never thrown away. Waiters wake in the
        order they began to wait, so the first blocked enters first."""
        while self.is_full:
            await self._room.wait()

    async def run(self, *, fetching: Callable[[], int]) -> None:
        """Serve the queue with c servers until it is closed; `fetching` counts the visits
        in flight."""
        tasks = self.servers if self.analysis is None else SERVERS_PER_WORKER * self.servers
        async with asyncio.TaskGroup() as servers:
            for number in range(tasks):
                worker = number % self.servers
                servers.create_task(self._server(fetching, worker), name=f"processor-{number}")

    async def _server(self, fetching: Callable[[], int], worker: int) -> None:
        while True:
            visit = await self._responses.get()
            if visit is None:
                self._responses.put_nowait(None)  # for the other servers
                return
            self._serving += 1
            place = self._taken
            self._taken += 1
            try:
                outcome, relevance = await self._serve(visit, place, worker)
                self._observe(visit, outcome, relevance)
                self.pool.departure(
                    visit.candidate.host,
                    self._server_time.departure(),
                    queue=self.length,
                    active=fetching(),
                )
                self.pool.idle(self._server_time.take_idle())
            finally:
                self._serving -= 1
                self._room.set()  # a place is free: the first blocked page takes it
                self._room.clear()
                self.wake.set()  # the pool may want more fetchers now

    async def _serve(self, visit: Visit, place: int, worker: int) -> tuple[Outcome, float | None]:
        claimed: list[str] = []  # the canonical URL taken on for this page, if one
        try:
            job = self.processor.analysis_job(visit)
            analysis = None if job is None else await self._analysed(job, worker)
            taken = await self._canonical(visit, analysis, claimed)
            if self.analysis is None:
                processed = self.processor.score(visit, analysis, taken)
            else:
                await self._wait_for_turn(place)
                processed = self.processor.finish(visit, analysis, taken)
                self.analysis.remember(link.url for link in processed.write.links)
        except WorkerDiedError:  # killed, out of memory: stop loudly
            self._give_up(claimed)
            raise
        except Exception:  # recorded as this URL's outcome; the crawl goes on
            log.warning("internal error processing %s", visit.final_url, exc_info=True)
            self._give_up(claimed)
            facts = Facts(met=visit.outcome, failed=True)
            outcome = decide(facts, max_retries=NO_TRIES_LEFT).outcome
            failed = dataclasses.replace(visit, outcome=outcome)
            await self._wait_for_turn(place)
            processed = self.processor.process(failed)
        except BaseException:
            self._give_up(claimed)
            raise
        finally:
            if self._finished == place:  # scored, or failed: the next page's turn
                self._finished += 1
                self._turn.set()
                self._turn.clear()
        self.writer.put(processed.write)
        return processed.outcome, processed.relevance

    async def _analysed(self, job: AnalysisJob, worker: int) -> PageAnalysis | None:
        """The page analysed here, or by a worker if it is worth handing over; None if
        unreadable."""
        if self.analysis is None or not self.analysis.takes(job):
            self.metrics.pages_analysed.labels(where="event_loop").inc()
            return self.processor.analyse(job)
        self.metrics.pages_analysed.labels(where="workers").inc()
        with contextlib.suppress(*UNREADABLE):
            return await self.analysis.analyze(job, worker)
        return None

    async def _canonical(
        self, visit: Visit, analysis: PageAnalysis | None, claimed: list[str]
    ) -> canonical.Canonical | None:
        """The canonical URL the page is stored under, or is a variant of; None where it
        is stored as itself. A URL claimed is added to `claimed`. A re-visit's page keeps
        what its first visit decided."""
        declared = None if analysis is None else analysis.canonical
        if self.fetched is None or declared is None or visit.candidate.revisit:
            return None
        chain = (visit.candidate.url, *visit.hops, visit.final_url or visit.candidate.url)
        depth = visit.candidate.depth
        taken = canonical.taken(declared, chain=chain, depth=depth, scope=self.processor.scope)
        if taken is None:
            return None
        if not await self.fetched.claim(taken.url):
            return dataclasses.replace(taken, variant=True)
        claimed.append(taken.url)
        return taken

    def _give_up(self, claimed: list[str]) -> None:
        """A page whose processing failed gives up the canonical URL it claimed."""
        if self.fetched is not None and claimed:
            self.fetched.end(claimed)

    async def _wait_for_turn(self, place: int) -> None:
        """Pages are scored in the order servers took them."""
        while self._finished != place:
            await self._turn.wait()

    def _observe(self, visit: Visit, outcome: Outcome, relevance: float | None) -> None:
        self.metrics.observe_outcome(outcome)
        outcomes = self.summary.outcomes
        outcomes[outcome.value] = outcomes.get(outcome.value, 0) + 1
        if visit.seconds > 0:
            self.metrics.fetch_duration.observe(visit.seconds)
        if relevance is not None:
            self.metrics.relevance.observe(relevance)
            if relevance >= self.relevance_threshold:
                self.summary.relevant += 1
                self.metrics.relevant_pages.inc()
