"""The engine: wires the frontier policy, politeness, fetching, processing and storage.

    seeds -> frontier policy -> visits (per-host politeness) -> response queue (K)
          -> processor (parse, score) -> storage writer -> new URLs back to the frontier

Every re-visit period, the sources the re-visit policy chooses join the frontier, ahead
of their hosts' other URLs (`crawler.engine.revisits`). One TaskGroup holds the dispatcher, the
visits, the processor, the writer, the re-visit plans and the checkpoints. The engine
decides whether to dispatch (the pool policy's target number of visits in flight);
politeness decides when each host may be asked. A page that
meets a full response queue waits with its fetcher until the processor frees a place
(blocking after service): no page is fetched twice because the processor was busy.
`drop_at_full_queue` keeps Talim et al.'s loss instead: the URL goes back to the frontier.
A visit waiting part-way for a host's turn (a redirect's target) is not fetching: its
place goes to another visit meanwhile, and visits in all stay within twice the
concurrency. Each checkpoint saves the hosts changed since the last; once saved, idle
hosts beyond `host_memory` leave memory (`crawler.net.host_memory`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncEngine

import storage
from crawler.engine.pool_control import PoolControl
from crawler.engine.revisits import Revisits, RevisitSettings
from crawler.net.host_memory import HostMemory
from crawler.net.politeness import Politeness
from crawler.net.visit import Visit, Visitor
from crawler.outcomes import Outcome
from crawler.pipeline.frontier_store import BoundedFrontier
from crawler.pipeline.processor import Processor, page_captures
from crawler.pipeline.warc_files import WarcArchive, WarcError
from crawler.pipeline.writer import Committed, StateWrite, StorageWriter
from crawler.telemetry.metrics import CrawlerMetrics
from crawler.telemetry.timeline import Timeline
from crawler.waiting import wait_event
from policies import Candidate, LinkContext, PriorityFrontier, TopicScorer

log = logging.getLogger(__name__)

CHECKPOINT_INTERVAL = 10.0  # seconds between saves of host and learned state
GAUGE_INTERVAL = 1.0  # seconds between updates of the gauges that cost a scan
MAX_WRITE_BACKLOG = 2_048  # results waiting for the writer before dispatching pauses
TIMELINE_INTERVAL = 5.0  # seconds between the timeline's samples (also at checkpoints)
MAX_IDLE_WAIT = 1.0  # longest the dispatcher sleeps without being woken
SCORER_STATE = "relevance.document_frequency"
FRONTIER_STATE = "frontier.{policy}"  # a learning frontier policy's state


@dataclass(frozen=True, slots=True, kw_only=True)
class EngineLimits:
    max_pages: int | None = None
    duration: float | None = None
    concurrency: int = 16
    max_retries: int = 3
    buffer: int = 16  # K: pages queued for the processor, the one it works on included
    relevance_threshold: float = 0.1
    stop_grace: float = 30.0  # seconds visits in flight get to finish at shutdown
    drop_at_full_queue: bool = False  # the paper's loss, instead of waiting for room
    frontier_memory: int = 100_000  # candidates held in memory; the rest wait in the database


@dataclass(slots=True)
class CrawlSummary:
    stop_reason: str = ""
    fetched: int = 0  # visits recorded in this run
    relevant: int = 0
    outcomes: dict[str, int] = dataclasses.field(default_factory=dict)
    seconds: float = 0.0
    frontier: int = 0


class Engine:
    def __init__(
        self,
        *,
        db: AsyncEngine,
        frontier: PriorityFrontier,
        politeness: Politeness,
        hosts: HostMemory,
        visitor: Visitor,
        processor: Processor,
        scorer: TopicScorer,
        metrics: CrawlerMetrics,
        limits: EngineLimits,
        pool: PoolControl,
        revisits: Revisits | None = None,
        archive: WarcArchive | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.db = db
        self.frontier = BoundedFrontier(frontier, capacity=limits.frontier_memory)
        self.politeness = politeness
        self.hosts = hosts
        self.visitor = visitor
        self.fetched = visitor.fetched
        self.turns = visitor.turns
        self.admission = visitor.turns.admission
        self.processor = processor
        self.scorer = scorer
        self.metrics = metrics
        self.limits = limits
        self.pool = pool
        self.revisits = revisits or Revisits(RevisitSettings(), seeds=())
        self.clock = clock
        self.wall_clock = wall_clock
        self.summary = CrawlSummary()
        self.timeline = Timeline(metrics.registry, politeness, run=wall_clock())
        self.archive = archive
        self._writer = StorageWriter(db, on_committed=self._committed, archive=archive)
        # bounded by the engine (K, the page in service included), not by the queue
        self._responses: asyncio.Queue[Visit | None] = asyncio.Queue()
        self._room = asyncio.Event()  # the processor took a page: a blocked one may enter
        self._stop = asyncio.Event()
        self._wake = self.admission.changed  # the dispatcher's wake-up call
        self._visits: set[asyncio.Task[None]] = set()
        self._processing = 0
        self._refill: asyncio.Task[None] | None = None

    # -- control ---------------------------------------------------------------------

    def request_stop(self) -> None:
        """Stop dispatching; what is in flight finishes and is stored."""
        self._stop.set()
        self._wake.set()

    @property
    def in_flight(self) -> int:
        """Visits fetching, not those waiting part-way for a host's turn."""
        return self.admission.fetching

    @property
    def queue_length(self) -> int:
        """Pages at the processor: waiting, and the one it is working on."""
        return self._responses.qsize() + self._processing

    def is_idle(self) -> bool:
        """Nothing to fetch, nothing under way that could reveal more, no source to re-visit."""
        return (
            not (self.revisits.settings.enabled and self.revisits.sources)
            and self.frontier.queued == 0
            and self._refill is None
            and not self._visits
            and self._responses.empty()
            and self._processing == 0
            and self._writer.pending == 0
        )

    # -- lifecycle -------------------------------------------------------------------

    async def run(self) -> CrawlSummary:
        started = self.clock()
        await self._restore()
        try:
            async with asyncio.TaskGroup() as group:
                writer = group.create_task(self._writer.run(), name="writer")
                processor = group.create_task(self._process_loop(), name="processor")
                checkpoints = group.create_task(self._checkpoint_loop(), name="checkpoints")
                revisits = group.create_task(self._revisit_loop(), name="revisits")
                self.summary.stop_reason = await self._dispatch_loop(group)
                # a normal stop: finish what is under way, in pipeline order. On a
                # failure or a cancellation the group cancels every task instead.
                await self._drain_visits()
                await self._responses.put(None)
                await processor
                checkpoints.cancel()
                revisits.cancel()
                await self.pool.close()
                # what the last pages taught is in the state saved
                await self._writer.drained()
                self._save_state()
                self._writer.close()
                await writer
                if self.archive is not None:  # all its records committed: closed
                    await asyncio.to_thread(self.archive.close)
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

    async def _restore(self) -> None:
        """Bring back what earlier runs learned: the hosts still closed (the others when
        visited), the model, the frontier."""
        async with self.db.connect() as connection:
            await self.hosts.restore(connection)
            if self.revisits.settings.enabled:
                self.revisits.restore(await storage.load_sources(connection))
            state = await storage.load_learned_state(connection, SCORER_STATE)
            if state is not None:
                self.scorer.set_state(state)
            policy = self.frontier.policy
            state = await storage.load_learned_state(
                connection, FRONTIER_STATE.format(policy=policy.name)
            )
            if state is not None:
                policy.set_state(state)
            queued = await storage.count_queued_by_host(connection)
        self.frontier.spill_count(queued)  # all of them in the database only, so far
        await self.frontier.refill(self.db)  # the best of them, up to the bound
        self._observe_queues()
        self.metrics.sources.set(len(self.revisits.sources))

    async def _drain_visits(self) -> None:
        if not self._visits:
            return
        _, pending = await asyncio.wait(self._visits, timeout=self.limits.stop_grace)
        for task in pending:  # their URLs are still queued in the database
            task.cancel()
        if pending:
            log.warning("cancelled %d visits still running after the grace period", len(pending))
            await asyncio.wait(pending)

    # -- dispatching -----------------------------------------------------------------

    async def _dispatch_loop(self, group: asyncio.TaskGroup) -> str:
        limits = self.limits
        deadline = None if limits.duration is None else self.clock() + limits.duration
        while not self._stop.is_set():
            now = self.clock()
            if deadline is not None and now >= deadline:
                return "duration"
            room = self.admission.room(self.turns.waiting_ready(now))
            if limits.max_pages is not None:
                left = limits.max_pages - self.summary.fetched
                if left <= 0:
                    return "max_pages"
                room = min(room, left - len(self._visits))
            if self.frontier.needs_refill() and self._refill is None:
                self._refill = group.create_task(self._refill_frontier(), name="refill")
            # backpressure: results the writer has not committed hold memory (text,
            # links); past a bound, no new visits until it catches up
            blocked = room <= 0 or self._writer.pending >= MAX_WRITE_BACKLOG
            if not blocked:
                candidate = self.frontier.pop(functools.partial(self._ready, now=now))
                if (
                    candidate is not None
                    and not candidate.revisit
                    and candidate.url in self.fetched
                ):
                    # a redirect took this URL on: that visit fetches and records it
                    self.frontier.stored(candidate.url_id)
                    continue
                if candidate is not None:
                    self.politeness.start(candidate.host, now)
                    self.fetched.begin(candidate.url)
                    visit = self._visit(candidate, dispatched=now)
                    try:
                        task = group.create_task(visit)
                    except RuntimeError:  # the group is shutting down: a failure elsewhere
                        visit.close()
                        raise
                    self._visits.add(task)
                    self.admission.started()
                    self._observe_queues()
                    continue
            if self.is_idle():
                return "frontier exhausted"
            # blocked, a visit ending or a commit wakes the loop; else the next host's turn
            timeout = MAX_IDLE_WAIT if blocked else self._until_next_ready(now)
            if deadline is not None:
                timeout = min(timeout, max(0.0, deadline - now))
            self._wake.clear()
            await wait_event(self._wake, timeout)
        return "stopped"

    async def _refill_frontier(self) -> None:
        """Bring spilled URLs back from the database while the frontier runs low."""
        try:
            await self.frontier.refill(self.db)
        finally:
            self._refill = None
            self._observe_queues()
            self._wake.set()

    def _ready(self, host: str, *, now: float) -> bool:
        return self.politeness.ready(host, now)

    def _until_next_ready(self, now: float) -> float:
        soonest = MAX_IDLE_WAIT
        for host in self.frontier.hosts():
            ready_at = self.politeness.ready_at(host)
            if ready_at is not None:
                soonest = min(soonest, ready_at - now)
        return max(soonest, 0.0)

    async def _visit(self, candidate: Candidate, *, dispatched: float) -> None:
        try:
            try:
                visit = await self.visitor.visit(candidate)
            except Exception:  # a bug met on this URL is its outcome, not the crawl's end
                log.warning("internal error visiting %s", candidate.url, exc_info=True)
                visit = Visit(candidate, Outcome.INTERNAL_ERROR, candidate.url)
            if visit.response is not None:
                self.metrics.response_bytes.inc(visit.response.size)
            self._archive_robots(visit)
            if visit.outcome.retried and candidate.attempts < self.limits.max_retries:
                self.metrics.observe_outcome(visit.outcome)
                self._archive_unstored(visit)
                self.fetched.end([candidate.url, *visit.hops])
                self.frontier.put_back(
                    dataclasses.replace(candidate, attempts=candidate.attempts + 1)
                )
                return
            queue = self.queue_length
            busy = self.clock() - dispatched - visit.waited  # a fetcher's time on the page
            self.pool.arrival(candidate.host, busy, queue=queue, active=self.in_flight)
            if queue >= self.limits.buffer:
                if self.limits.drop_at_full_queue:
                    self.pool.loss()  # fetched in vain; fetched again later
                    self._archive_unstored(visit)
                    self.fetched.end([candidate.url, *visit.hops])
                    self.frontier.put_back(candidate)
                    return
                blocked = self.clock()
                await self._wait_for_room()
                self.pool.blocked(self.clock() - blocked)
            self.summary.fetched += 1
            self._responses.put_nowait(visit)
        finally:
            self._visits.discard(asyncio.current_task())  # type: ignore[arg-type]
            self.admission.ended()
            self.turns.place_freed()
            self._observe_queues()
            self._wake.set()

    def _archive_robots(self, visit: Visit) -> None:
        """The robots.txt answers a visit captured go to the WARC file in the same
        transaction as their hosts' rules: a resumed crawl that has the record has the
        rules, and does not ask for them (nor archive them) again."""
        robots = [exchange for exchange in visit.exchanges if exchange.robots]
        if robots:
            hosts = self.hosts.records(visit.robots_fetched)
            self._writer.put(StateWrite(hosts=hosts, captures=robots))

    def _archive_unstored(self, visit: Visit) -> None:
        """A page's answers that no row records (429s retried, a page lost to a full
        queue) are archived all the same: the server sent them."""
        captures = page_captures(visit)
        if captures:
            self._writer.put(StateWrite(captures=captures))

    async def _wait_for_room(self) -> None:
        """Hold the fetcher and its page until the processor's queue has room (blocking
        after service): a page someone's server sent is never thrown away. Waiters wake
        in the order they began to wait, so the first blocked enters first."""
        while self.queue_length >= self.limits.buffer:
            await self._room.wait()

    # -- processing and storing -----------------------------------------------------

    async def _process_loop(self) -> None:
        while True:
            waiting = self.clock()
            visit = await self._responses.get()
            started = self.clock()
            self.pool.idle(started - waiting)
            if visit is None:
                return
            self._processing += 1
            try:
                try:
                    processed = self.processor.process(visit)
                except Exception:  # recorded as this URL's outcome; the crawl goes on
                    log.warning("internal error processing %s", visit.final_url, exc_info=True)
                    failed = dataclasses.replace(visit, outcome=Outcome.INTERNAL_ERROR)
                    processed = self.processor.process(failed)
                self._writer.put(processed.write)
                self._observe_processed(visit, processed.outcome, processed.relevance)
                self.pool.departure(
                    visit.candidate.host,
                    self.clock() - started,
                    queue=self.queue_length,
                    active=self.in_flight,
                )
            finally:
                self._processing -= 1
                self._room.set()  # a place is free: the first blocked page takes it
                self._room.clear()
                self._observe_queues()
                self._wake.set()  # the pool may want more fetchers now

    def _observe_processed(self, visit: Visit, outcome: Outcome, relevance: float | None) -> None:
        self.metrics.observe_outcome(outcome)
        self.summary.outcomes[outcome.value] = self.summary.outcomes.get(outcome.value, 0) + 1
        if visit.seconds > 0:
            self.metrics.fetch_duration.observe(visit.seconds)
        if relevance is not None:
            self.metrics.relevance.observe(relevance)
            if relevance >= self.limits.relevance_threshold:
                self.summary.relevant += 1
                self.metrics.relevant_pages.inc()

    def _committed(self, committed: list[Committed]) -> None:
        for item in committed:
            candidate, record = item.write.candidate, item.write.record
            self.frontier.stored(candidate.url_id)
            self.frontier.drop(item.dropped)
            self.fetched.end([candidate.url, *(hop.url for hop in item.write.reached)])
            contexts = item.write.contexts
            children = [_candidate(queued, contexts.get(queued.url)) for queued in item.new_urls]
            relevance = 0.0 if record is None else record.relevance or 0.0
            self.frontier.on_fetched(candidate, relevance, children)
            for child in children:
                self.frontier.push(child)
            self.metrics.links_discovered.inc(len(children))
            self._observe_revisit(item)
        self.metrics.pages_stored.inc(len(committed))
        self._observe_queues()
        self._wake.set()

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

    async def _revisit_loop(self) -> None:
        """Every period, the sources the re-visit policy chooses go to the frontier."""
        settings = self.revisits.settings
        if not settings.enabled:
            return
        self.metrics.revisit_budget.set(settings.budget)
        while True:
            await asyncio.sleep(settings.period)
            planned = self.revisits.plan()
            for candidate in planned:
                self.frontier.push(candidate)
            self.metrics.revisits_planned.inc(len(planned))
            self._observe_queues()
            self._wake.set()

    def _observe_queues(self) -> None:
        self.metrics.frontier_size.set(self.frontier.queued)
        self.metrics.frontier_in_memory.set(len(self.frontier))
        self.metrics.in_flight.set(self.in_flight)
        self.metrics.response_queue.set(self.queue_length)
        self.metrics.write_queue.set(self._writer.pending)

    # -- checkpoints -----------------------------------------------------------------

    async def _checkpoint_loop(self) -> None:
        last_checkpoint = last_sample = self.clock()
        while True:
            await asyncio.sleep(GAUGE_INTERVAL)
            now = self.clock()
            hosts = list(self.frontier.hosts())
            self.metrics.hosts_waiting.set(self.politeness.waiting_hosts(hosts, now))
            if self.frontier.check_starved(now):
                self._wake.set()  # the dispatcher starts the refill
            self.metrics.tasks.set(len(asyncio.all_tasks()))
            self.pool.refresh()
            self._forget_idle_hosts()
            if now - last_checkpoint >= CHECKPOINT_INTERVAL:
                self._save_state()
                last_checkpoint = last_sample = now
            elif now - last_sample >= TIMELINE_INTERVAL:
                self._writer.put(StateWrite(timeline=[self._sample()]))
                last_sample = now

    def _save_state(self) -> None:
        """Save the hosts changed since the last checkpoint, the learned model, and a
        sample of the timeline; once that has committed, those hosts may leave memory."""
        hosts = self.hosts.take_dirty()
        write = StateWrite(
            hosts=hosts,
            sources=self.revisits.take_dirty(),
            learned=self._learned_state(),
            timeline=[self._sample()],
        )
        self.hosts.saving(hosts, self._writer.put(write))

    def _forget_idle_hosts(self) -> None:
        self.hosts.evict(saved_through=self._writer.committed, waiting=self.admission.waiting_hosts)
        self.metrics.hosts_in_memory.set(len(self.hosts))

    def _sample(self) -> storage.TimelineSample:
        self.metrics.tasks.set(len(asyncio.all_tasks()))
        return self.timeline.sample(self.wall_clock())

    def _learned_state(self) -> dict[str, bytes]:
        learned = {SCORER_STATE: self.scorer.get_state()}
        policy = self.frontier.policy
        state = policy.get_state()
        if state is not None:
            learned[FRONTIER_STATE.format(policy=policy.name)] = state
        return learned


def _candidate(queued: storage.QueuedUrl, context: LinkContext | None = None) -> Candidate:
    return Candidate(
        queued.id, queued.url, queued.host, queued.depth, queued.score, context=context
    )
