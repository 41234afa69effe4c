"""The engine: the crawl's lifecycle and its dispatcher.

    seeds -> frontier policy -> visits (per-host politeness) -> response queue (K)
          -> processor (parse, score) -> storage writer -> new URLs back to the frontier

One TaskGroup holds the dispatcher, the visits (`visits`), the processor (`processing`),
the writer, the re-visit plans and the checkpoints (`checkpoints`). The engine decides
whether to dispatch (the pool policy's target of visits in flight); politeness decides
when each host may be asked: a host the frontier finds not ready is parked, and woken
at its turn (`host_readiness`, from a heap of times), which the dispatcher sleeps on. A
fetched visit is settled in one place (`settle`): retried, lost (only with
`drop_at_full_queue`, Talim et al.'s loss) or queued, its fetcher waiting for room
(blocking after service); none is dispatched while each of the processor's servers has
a page waiting. What a commit stored goes back to the frontier
(`feedback`). A visit waiting part-way for a host's turn (a redirect's target) is not
fetching: its place goes to another visit, and visits in all stay within twice the
concurrency. A paused engine dispatches nothing (`pause`): the visits in flight finish
and are stored, and it waits, even with nothing left to do, until it is resumed.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Callable, Sequence

from sqlalchemy.ext.asyncio import AsyncEngine

import storage
from crawler.config import sections
from crawler.engine.checkpoints import Checkpoints
from crawler.engine.host_readiness import MAX_IDLE_WAIT, HostReadiness
from crawler.engine.lease_keeper import LeaseKeeper
from crawler.engine.leases import HostLeases
from crawler.engine.visits import Visits
from crawler.engine.writer_hold import WriterHold
from crawler.fetch.admission import Admission
from crawler.fetch.fetched_urls import FetchedUrls
from crawler.fetch.host_turns import HostTurns
from crawler.fetch.politeness import Politeness
from crawler.frontier.frontier_store import BoundedFrontier, candidate_of
from crawler.frontier.revisits import Revisits
from crawler.process.pool_control import PoolControl
from crawler.process.processing import Processing
from crawler.store.warc_files import WarcArchive, WarcError
from crawler.store.writer import StorageWriter
from crawler.summary import CrawlSummary
from crawler.telemetry.metrics import CrawlerMetrics
from crawler.waiting import wait_event

log = logging.getLogger(__name__)


class Engine:
    """The dispatcher and the crawl's lifecycle over parts built for it
    (`crawler.engine.assembly`): it starts visits and runs the parts' tasks."""

    def __init__(
        self,
        *,
        db: AsyncEngine,
        frontier: BoundedFrontier,
        politeness: Politeness,
        turns: HostTurns,
        admission: Admission,
        fetched: FetchedUrls,
        visits: Visits,
        processing: Processing,
        writer: StorageWriter,
        writer_hold: WriterHold,
        checkpoints: Checkpoints,
        pool: PoolControl,
        revisits: Revisits,
        metrics: CrawlerMetrics,
        summary: CrawlSummary,
        limits: sections.Limits,
        stop_grace: float,  # seconds visits in flight get to finish at shutdown
        drop_at_full_queue: bool,  # the paper's loss, instead of waiting for room
        retry: storage.DatabaseRetry,
        archive: WarcArchive | None = None,
        leases: HostLeases | None = None,  # a crawl shared with other daemons
        lease_keeper: LeaseKeeper | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.db = db
        self.retry = retry
        self.leases = leases  # the hosts this daemon holds
        self.lease_keeper = lease_keeper
        self.frontier = frontier
        self.politeness = politeness
        self.turns = turns
        self.admission = admission
        self.fetched = fetched
        self.visits = visits
        self.processing = processing
        self._writer = writer
        self.writer_hold = writer_hold
        self.checkpoints = checkpoints
        self.pool = pool
        self.revisits = revisits
        self.metrics = metrics
        self.summary = summary
        self.limits = limits
        self.stop_grace = stop_grace
        self.drop_at_full_queue = drop_at_full_queue
        self.archive = archive
        self.clock = clock
        self._wake = self.admission.changed  # the dispatcher's wake-up call
        self.hosts = HostReadiness(frontier=frontier, politeness=politeness, leases=leases)
        self._stop = asyncio.Event()
        self._paused = False
        self._refill: asyncio.Task[None] | None = None

    # -- control ---------------------------------------------------------------------

    def request_stop(self) -> None:
        """Stop dispatching; what is in flight finishes and is stored."""
        self._stop.set()
        self._wake.set()

    def pause(self) -> None:
        """Dispatch nothing until `resume`; what is in flight finishes and is stored."""
        self._paused = True

    def resume(self) -> None:
        self._paused = False
        self._wake.set()

    @property
    def paused(self) -> bool:
        return self._paused

    async def queue_urls(self, urls: Sequence[storage.NewUrl]) -> list[storage.QueuedUrl]:
        """Queue URLs from outside the crawl (seeds added while it runs): stored, then
        handed to the frontier at once. The URLs that were new; a known URL is left as
        it is (queued, or visited)."""
        async with self.db.begin() as connection:
            queued = await storage.add_urls(connection, urls)
        for new in queued:
            self.frontier.push(candidate_of(new))
        self._wake.set()
        return queued

    @property
    def in_flight(self) -> int:
        """Visits fetching, not those waiting part-way for a host's turn."""
        return self.admission.fetching

    @property
    def queue_length(self) -> int:
        """Pages at the processor: waiting, and the one it is working on."""
        return self.processing.length

    def is_idle(self) -> bool:
        """Nothing to fetch, nothing under way that could reveal more, no source to re-visit."""
        return (
            not (self.revisits.settings.enabled and self.revisits.sources)
            and self.frontier.queued == 0
            and self._refill is None
            and not self.visits
            and self.processing.is_empty()
            and self._writer.pending == 0
            # in a shared crawl, until no URL is queued anywhere: a killed daemon's hosts
            # come to the others when their leases expire
            and (self.leases is None or not self.leases.crawl_has_work)
        )

    # -- lifecycle -------------------------------------------------------------------

    async def run(self) -> CrawlSummary:
        started = self.clock()
        if self.lease_keeper is not None:
            await self.lease_keeper.join()
        await self.checkpoints.restore()
        self._observe_queues()
        try:
            async with asyncio.TaskGroup() as group:
                writer = group.create_task(self._writer.run(), name="writer")
                processor = group.create_task(
                    self.processing.run(fetching=lambda: self.in_flight), name="processor"
                )
                checkpoints = group.create_task(self.checkpoints.run(), name="checkpoints")
                revisits = group.create_task(self._revisit_loop(), name="revisits")
                leases = None
                if self.lease_keeper is not None:
                    leases = group.create_task(self.lease_keeper.run(), name="leases")
                self.summary.stop_reason = await self._dispatch_loop(group)
                # a normal stop: finish what is under way, in pipeline order. On a
                # failure or a cancellation the group cancels every task instead.
                await self.visits.drain(self.stop_grace)
                self.processing.close()
                await processor
                checkpoints.cancel()
                revisits.cancel()
                if leases is not None:
                    leases.cancel()
                await self.pool.close()
                # what the last pages taught is in the state saved
                await self._writer.drained()
                self.checkpoints.save()
                self._writer.close()
                await writer
                if self.archive is not None:  # all its records committed: closed
                    await asyncio.to_thread(self.archive.close)
                if self.lease_keeper is not None:
                    await self.lease_keeper.leave()
        except BaseExceptionGroup as failures:
            # the database or the WARC files failing is the user's to fix (disk full,
            # read-only): say so plainly; anything else is a bug in the engine and
            # stops it loudly
            storage_errors = failures.subgroup((storage.StorageError, WarcError))
            if storage_errors is not None:
                raise storage_errors.exceptions[0] from failures
            raise
        self.summary.seconds = self.clock() - started
        self.summary.frontier = self.frontier.queued
        return self.summary

    # -- dispatching -----------------------------------------------------------------

    async def _dispatch_loop(self, group: asyncio.TaskGroup) -> str:
        limits = self.limits
        deadline = None if limits.duration is None else self.clock() + limits.duration
        while not self._stop.is_set():
            self._observe_queues()  # woken by a change: the gauges show it
            now = self.clock()
            if deadline is not None and now >= deadline:
                return "duration"
            self.hosts.wake_parked(now)
            room = self.admission.room(self.turns.waiting_ready(now))
            if limits.max_pages is not None:
                left = limits.max_pages - self.summary.fetched
                if left <= 0:
                    return "max_pages"
                room = min(room, left - len(self.visits))
            if self.frontier.needs_refill() and self._refill is None:
                self._refill = group.create_task(self._refill_frontier(), name="refill")
            # backpressure: results the writer has not committed hold memory (text,
            # links), and their links are not in the frontier yet (`write_hold`)
            blocked = (
                self._paused or room <= 0 or self.writer_hold.holds(now) or self._processor_behind()
            )
            if not blocked:
                candidate = self.frontier.pop(
                    functools.partial(self.hosts.ready, now=now),
                    functools.partial(self.hosts.turn_comes, now=now),
                )
                if (
                    candidate is not None
                    and not candidate.revisit
                    and candidate.url in self.fetched
                ):
                    # a redirect took this URL on: that visit fetches and records it
                    self.frontier.stored(candidate.url_id, page=False)
                    continue
                if candidate is not None:
                    self.politeness.start(candidate.host, now)
                    self.visits.start(group, candidate, now=now)
                    continue
            if not self._paused and self.is_idle():
                return "frontier exhausted"
            # blocked, a visit ending or a commit wakes the loop; else the next host's turn
            if blocked:
                timeout = MAX_IDLE_WAIT
            elif self.frontier.waiting_for is not None:  # the policy waits for that host
                self.metrics.focus_waits.inc()
                timeout = self.hosts.until_ready(self.frontier.waiting_for, now)
            elif (next_at := self.hosts.next_turn(now)) is not None:  # a parked host's turn
                timeout = min(max(next_at - now, 0.0), MAX_IDLE_WAIT)
            else:
                timeout = MAX_IDLE_WAIT
            if deadline is not None:
                timeout = min(timeout, max(0.0, deadline - now))
            self._wake.clear()
            await wait_event(self._wake, timeout)
        return "stopped"

    def _processor_behind(self) -> bool:
        """Each of the processor's servers has a page waiting: hold new visits.

        A page fetched now would wait a round at the processor, and the links of the
        pages ahead of it are not yet in the frontier: its URL would be chosen without
        them. Without the hold the queue fills to K and every choice misses K pages'
        links, which costs a focused crawl its focus when the processor is the slower
        side. With the paper's loss (`drop_at_full_queue`) the queue is the model's and
        fills as it does there."""
        if self.drop_at_full_queue:
            return False
        return self.processing.waiting >= self.processing.servers

    async def _refill_frontier(self) -> None:
        """Bring spilled URLs back from the database while the frontier runs low."""
        try:
            await self.retry.run(lambda: self.frontier.refill(self.db), doing="read from")
        finally:
            self._refill = None
            self._wake.set()

    async def _revisit_loop(self) -> None:
        """Every period, the sources the re-visit policy chooses go to the frontier."""
        settings = self.revisits.settings
        if not settings.enabled:
            return
        self.metrics.revisit_budget.set(settings.revisit_budget)
        while True:
            await asyncio.sleep(settings.revisit_period)
            planned = self.revisits.plan()
            for candidate in planned:
                self.frontier.push(candidate)
            self.metrics.revisits_planned.inc(len(planned))
            self._wake.set()

    def _observe_queues(self) -> None:
        self.metrics.frontier_size.set(self.frontier.queued)
        self.metrics.frontier_in_memory.set(len(self.frontier))
        self.metrics.in_flight.set(self.in_flight)
        self.metrics.response_queue.set(self.queue_length)
        self.metrics.write_queue.set(self._writer.pending)
