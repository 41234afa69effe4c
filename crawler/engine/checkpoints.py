"""What lets a crawl resume: restoring what earlier runs learned, and saving it again.

Every GAUGE_INTERVAL the gauges that cost a scan are updated and idle hosts leave memory;
every CHECKPOINT_INTERVAL the hosts changed since the last checkpoint, the sources, the
learned models and a sample of the timeline go to the writer in one write. Once that
write has committed, its hosts may leave memory (`crawler.fetch.host_memory`).

A daemon of a shared crawl saves what its models learned from its own pages under its
own name (`relevance.document_frequency@DAEMON`), and at each checkpoint merges into its
models what the crawl's other daemons last saved (`merge`: counts add up, weights are
mixed), so each scores with the whole crawl's model, one or two checkpoints old.

Every LABEL_INTERVAL it looks for labels new since the last look (`crawler.engine.labels`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

import storage
from crawler.engine.labels import LabelWatch
from crawler.fetch.admission import Admission
from crawler.fetch.deciding import REDIRECT_STATUSES
from crawler.fetch.host_memory import HostMemory
from crawler.fetch.politeness import Politeness
from crawler.frontier.frontier_store import BoundedFrontier
from crawler.frontier.revisits import Revisits
from crawler.process.pool_control import PoolControl
from crawler.store.records import StateWrite
from crawler.store.writer import StorageWriter
from crawler.telemetry.metrics import CrawlerMetrics
from crawler.telemetry.timeline import Timeline
from policies import TopicScorer

log = logging.getLogger(__name__)

CHECKPOINT_INTERVAL = 10.0  # seconds between saves of host and learned state
GAUGE_INTERVAL = 1.0  # seconds between updates of the gauges that cost a scan
TIMELINE_INTERVAL = 5.0  # seconds between the timeline's samples (also at checkpoints)
LABEL_INTERVAL = 2.0  # seconds between looks at the labels table (one small read)
SCORER_STATE = "relevance.document_frequency"
FRONTIER_STATE = "frontier.{policy}"  # a learning frontier policy's state


class Checkpoints:
    def __init__(
        self,
        *,
        db: AsyncEngine,
        frontier: BoundedFrontier,
        hosts: HostMemory,
        politeness: Politeness,
        admission: Admission,
        revisits: Revisits,
        scorer: TopicScorer,
        labels: LabelWatch,
        writer: StorageWriter,
        pool: PoolControl,
        metrics: CrawlerMetrics,
        wake: asyncio.Event,
        daemon_id: str | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.db = db
        self.frontier = frontier
        self.hosts = hosts
        self.politeness = politeness
        self.admission = admission
        self.revisits = revisits
        self.scorer = scorer
        self.labels = labels
        self.writer = writer
        self.pool = pool
        self.metrics = metrics
        self.wake = wake  # the dispatcher's: a starved frontier wants a refill
        # a daemon of a shared crawl keeps its models under names of its own
        self.daemon_id = daemon_id
        self.clock = clock
        self.wall_clock = wall_clock
        self.timeline = Timeline(metrics.registry, politeness, run=wall_clock())

    async def restore(self) -> None:
        """Bring back what earlier runs learned: the hosts still closed (the others when
        visited), the sources, the models, the user's labels, the frontier."""
        async with self.db.connect() as connection:
            await self.hosts.restore(connection)
            if self.revisits.settings.enabled:
                self.revisits.restore(await storage.load_sources(connection))
            own = await storage.load_learned_state(connection, self._state_name(SCORER_STATE))
            if own is not None:
                self.scorer.set_state(own)
            name = self._state_name(self._frontier_state())
            own = await storage.load_learned_state(connection, name)
            if own is not None:
                self.frontier.policy.set_state(own)
            queued = await storage.count_queued_by_host(connection, self.frontier.owner)
            if self.frontier.budget.enabled:  # before the frontier holds any URL
                self.frontier.budget.add(
                    await storage.pages_by_host(connection, not_counted=REDIRECT_STATUSES)
                )
        await self.merge_others()
        await self.labels.refresh()
        self.frontier.spill_count(queued)  # all of them in the database only, so far
        await self.frontier.refill(self.db)  # the best of them, up to the bound
        self.metrics.sources.set(len(self.revisits.sources))

    def _state_name(self, name: str) -> str:
        return name if self.daemon_id is None else f"{name}@{self.daemon_id}"

    def _frontier_state(self) -> str:
        return FRONTIER_STATE.format(policy=self.frontier.policy.name)

    async def _others_states(self, connection: AsyncConnection, name: str) -> list[bytes]:
        """A model's state as the crawl's other daemons (and a run of it by one daemon,
        under the plain name) saved theirs."""
        saved = await storage.load_learned_states(connection, name)
        saved.pop(self._state_name(name), None)
        return list(saved.values())

    async def merge_others(self) -> None:
        """Merge into this daemon's models what the crawl's other daemons last saved. A
        read that fails, or a state that cannot be read, leaves the models as they are
        until the next checkpoint: the crawl goes on."""
        if self.daemon_id is None:
            return
        try:
            async with self.db.connect() as connection:
                scorer_states = await self._others_states(connection, SCORER_STATE)
                frontier_states = await self._others_states(connection, self._frontier_state())
            self.scorer.merge(scorer_states)
            self.frontier.policy.merge(frontier_states)
        except (SQLAlchemyError, OSError, ValueError) as error:
            log.warning("could not merge the other daemons' models: %s", error)

    async def run(self) -> None:
        last_checkpoint = last_sample = last_labels = self.clock()
        while True:
            await asyncio.sleep(GAUGE_INTERVAL)
            now = self.clock()
            hosts = list(self.frontier.hosts())
            self.metrics.hosts_waiting.set(self.politeness.waiting_hosts(hosts, now))
            self.metrics.tasks.set(len(asyncio.all_tasks()))
            self.pool.refresh()
            self._forget_idle_hosts()
            if now - last_checkpoint >= CHECKPOINT_INTERVAL:
                self.save()
                await self.merge_others()
                last_checkpoint = last_sample = now
            elif now - last_sample >= TIMELINE_INTERVAL:
                self.writer.put(StateWrite(timeline=[self._sample()]))
                last_sample = now
            if now - last_labels >= LABEL_INTERVAL:
                await self.labels.refresh()
                last_labels = now

    def save(self) -> None:
        """Save the hosts changed since the last checkpoint, the learned models, and a
        sample of the timeline; once that has committed, those hosts may leave memory."""
        hosts = self.hosts.take_dirty()
        write = StateWrite(
            hosts=hosts,
            sources=self.revisits.take_dirty(),
            learned=self._learned_state(),
            timeline=[self._sample()],
        )
        self.hosts.saving(hosts, self.writer.put(write))

    def _forget_idle_hosts(self) -> None:
        self.hosts.evict(saved_through=self.writer.committed, waiting=self.admission.waiting_hosts)
        self.metrics.hosts_in_memory.set(len(self.hosts))

    def _sample(self) -> storage.TimelineSample:
        self.metrics.tasks.set(len(asyncio.all_tasks()))
        return self.timeline.sample(self.wall_clock())

    def _learned_state(self) -> dict[str, bytes]:
        learned = {self._state_name(SCORER_STATE): self.scorer.get_state()}
        state = self.frontier.policy.get_state()
        if state is not None:
            learned[self._state_name(self._frontier_state())] = state
        return learned
