"""The engine's parts, wired: the storage writer and what a commit tells the frontier,
the processor's queue, a fetched visit's settlement, the visits in flight, the
checkpoints and, for a shared crawl, its leases. Each part wakes the dispatcher through
the admission's change event; none calls back into the engine."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy.ext.asyncio import AsyncEngine

import storage
from crawler.engine.checkpoints import Checkpoints
from crawler.engine.feedback import CommitFeedback, OnStored
from crawler.engine.labels import LabelWatch
from crawler.engine.lease_keeper import LeaseKeeper
from crawler.engine.leases import HostLeases
from crawler.engine.pool_control import PoolControl
from crawler.engine.processing import Processing
from crawler.engine.revisits import Revisits
from crawler.engine.settle import Settlement
from crawler.engine.summary import CrawlSummary
from crawler.engine.visits import Visits
from crawler.net.host_memory import HostMemory
from crawler.net.politeness import Politeness
from crawler.net.visit import Visitor
from crawler.pipeline.analysis_pool import AnalysisPool
from crawler.pipeline.frontier_store import BoundedFrontier
from crawler.pipeline.processor import Processor
from crawler.pipeline.warc_files import WarcArchive
from crawler.pipeline.writer import StorageWriter
from crawler.telemetry.metrics import CrawlerMetrics
from policies import TopicScorer

if TYPE_CHECKING:
    from crawler.engine.engine import EngineLimits


@dataclass(frozen=True, slots=True)
class EngineParts:
    writer: StorageWriter
    processing: Processing
    checkpoints: Checkpoints
    visits: Visits
    lease_keeper: LeaseKeeper | None

    @classmethod
    def build(
        cls,
        *,
        db: AsyncEngine,
        frontier: BoundedFrontier,
        politeness: Politeness,
        hosts: HostMemory,
        visitor: Visitor,
        processor: Processor,
        scorer: TopicScorer,
        metrics: CrawlerMetrics,
        limits: EngineLimits,
        pool: PoolControl,
        revisits: Revisits,
        summary: CrawlSummary,
        wake: asyncio.Event,
        archive: WarcArchive | None,
        analysis: AnalysisPool | None,
        leases: HostLeases | None,
        retry: storage.DatabaseRetry,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
        on_stored: OnStored | None = None,
    ) -> EngineParts:
        feedback = CommitFeedback(
            frontier=frontier,
            fetched=visitor.fetched,
            revisits=revisits,
            metrics=metrics,
            wake=wake,
            on_stored=on_stored,
        )
        writer = StorageWriter(db, on_committed=feedback, archive=archive, retry=retry)
        processing = Processing(
            processor=processor,
            writer=writer,
            pool=pool,
            metrics=metrics,
            summary=summary,
            buffer=limits.buffer,
            relevance_threshold=limits.relevance_threshold,
            wake=wake,
            analysis=analysis,
            fetched=visitor.fetched,
            clock=clock,
        )
        checkpoints = Checkpoints(
            db=db,
            frontier=frontier,
            hosts=hosts,
            politeness=politeness,
            admission=visitor.turns.admission,
            revisits=revisits,
            scorer=scorer,
            labels=LabelWatch(
                db=db,
                scorer=scorer,
                relevance_threshold=limits.relevance_threshold,
                metrics=metrics,
            ),
            writer=writer,
            pool=pool,
            metrics=metrics,
            wake=wake,
            daemon_id=None if leases is None else leases.daemon_id,
            clock=clock,
            wall_clock=wall_clock,
        )
        settlement = Settlement(
            frontier=frontier,
            fetched=visitor.fetched,
            hosts=hosts,
            writer=writer,
            processing=processing,
            pool=pool,
            metrics=metrics,
            max_retries=limits.max_retries,
            drop_at_full_queue=limits.drop_at_full_queue,
            clock=clock,
        )
        visits = Visits(
            visitor=visitor,
            settlement=settlement,
            summary=summary,
            wake=wake,
        )
        lease_keeper = None
        if leases is not None:
            lease_keeper = LeaseKeeper(
                leases,
                frontier=frontier,
                politeness=politeness,
                metrics=metrics,
                summary=summary,
                wake=wake,
                clock=clock,
            )
        return cls(writer, processing, checkpoints, visits, lease_keeper)
