"""The processor's queue of K places (Talim et al.'s buffer, the page in service
included) and the loop that serves it: parse, score, and hand the result to the writer.

A page that meets a full queue waits with its fetcher until the processor frees a place
(blocking after service, `wait_for_room`): waiters enter in the order they began to wait.
Every page's service and every wait is told to the pool's statistics.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Callable

from crawler.engine.pool_control import PoolControl
from crawler.engine.summary import CrawlSummary
from crawler.net.visit import Visit
from crawler.outcomes import Outcome
from crawler.pipeline.processor import Processor
from crawler.pipeline.writer import StorageWriter
from crawler.telemetry.metrics import CrawlerMetrics

log = logging.getLogger(__name__)


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
        on_change: Callable[[], None],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.processor = processor
        self.writer = writer
        self.pool = pool
        self.metrics = metrics
        self.summary = summary
        self.buffer = buffer
        self.relevance_threshold = relevance_threshold
        self.on_change = on_change  # a place freed, a page done: the engine looks again
        self.clock = clock
        # bounded here (K, the page in service included), not by the queue
        self._responses: asyncio.Queue[Visit | None] = asyncio.Queue()
        self._room = asyncio.Event()  # the processor took a page: a blocked one may enter
        self._serving = 0

    @property
    def length(self) -> int:
        """Pages at the processor: waiting, and the one it is working on."""
        return self._responses.qsize() + self._serving

    @property
    def is_full(self) -> bool:
        return self.length >= self.buffer

    def is_empty(self) -> bool:
        return self._responses.empty() and self._serving == 0

    def put(self, visit: Visit) -> None:
        self._responses.put_nowait(visit)

    def close(self) -> None:
        """No more pages: the loop ends once those queued are served."""
        self._responses.put_nowait(None)

    async def wait_for_room(self) -> None:
        """Hold the fetcher and its page until the queue has room (blocking after
        service): a page someone's server sent is never thrown away. Waiters wake in the
        order they began to wait, so the first blocked enters first."""
        while self.is_full:
            await self._room.wait()

    async def run(self, *, fetching: Callable[[], int]) -> None:
        """Serve the queue until it is closed; `fetching` counts the visits in flight."""
        while True:
            waiting = self.clock()
            visit = await self._responses.get()
            started = self.clock()
            self.pool.idle(started - waiting)
            if visit is None:
                return
            self._serving += 1
            try:
                outcome, relevance = self._serve(visit)
                self._observe(visit, outcome, relevance)
                self.pool.departure(
                    visit.candidate.host,
                    self.clock() - started,
                    queue=self.length,
                    active=fetching(),
                )
            finally:
                self._serving -= 1
                self._room.set()  # a place is free: the first blocked page takes it
                self._room.clear()
                self.on_change()  # the pool may want more fetchers now

    def _serve(self, visit: Visit) -> tuple[Outcome, float | None]:
        try:
            processed = self.processor.process(visit)
        except Exception:  # recorded as this URL's outcome; the crawl goes on
            log.warning("internal error processing %s", visit.final_url, exc_info=True)
            failed = dataclasses.replace(visit, outcome=Outcome.INTERNAL_ERROR)
            processed = self.processor.process(failed)
        self.writer.put(processed.write)
        return processed.outcome, processed.relevance

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
