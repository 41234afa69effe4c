"""The crawl's composition root: every part built once, each given its own section of
the settings (`crawler.config.sections`) and the parts it works with, and the engine
given what dispatch needs. None is handed a callback into another afterwards; a part
that frees something sets the admission's `changed` event, which wakes the dispatcher.

`crawler.service.run_crawl` opens what must be closed after the crawl (the database,
the resolver, the worker processes, the WARC files), builds the crawl here, and runs it.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncEngine

import storage
from crawler.config import CrawlConfig
from crawler.engine.checkpoints import Checkpoints
from crawler.engine.engine import Engine
from crawler.engine.labels import LabelWatch
from crawler.engine.lease_keeper import LeaseKeeper
from crawler.engine.leases import HostLeases, default_daemon_id
from crawler.engine.visits import Visits
from crawler.engine.writer_hold import WriterHold, write_hold
from crawler.fetch.admission import Admission
from crawler.fetch.fetched_urls import FetchedUrls
from crawler.fetch.fetcher import Fetcher
from crawler.fetch.host_memory import HostMemory
from crawler.fetch.host_turns import HostTurns
from crawler.fetch.netguard import NetworkGuard
from crawler.fetch.politeness import Politeness
from crawler.fetch.resolver import CachingResolver
from crawler.fetch.robots import RobotsCache
from crawler.fetch.sitemaps import Sitemaps
from crawler.fetch.visit import Visitor
from crawler.frontier.feedback import CommitFeedback, OnStored
from crawler.frontier.frontier_store import BoundedFrontier
from crawler.frontier.host_budget import HostBudget
from crawler.frontier.revisits import Revisits
from crawler.net.scope import Scope
from crawler.process.analysis_pool import AnalysisPool
from crawler.process.near_duplicate_index import restored_index
from crawler.process.pool_control import PoolControl
from crawler.process.processing import Processing
from crawler.process.processor import Processor
from crawler.settle.settle import Settlement
from crawler.store.warc_files import WarcArchive
from crawler.store.writer import StorageWriter
from crawler.summary import CrawlSummary
from crawler.telemetry.metrics import CrawlerMetrics
from policies import PriorityFrontier, TopicScorer, make_pool_policy

log = logging.getLogger(__name__)

STOP_GRACE_MARGIN = 5.0  # seconds beyond a request's timeout a visit gets at shutdown


@dataclass(frozen=True, slots=True, kw_only=True)
class Opened:
    """What the service opened for the crawl and closes after it."""

    db: AsyncEngine
    retry: storage.DatabaseRetry  # every read and write waits out the database away
    guard: NetworkGuard
    resolver: CachingResolver
    metrics: CrawlerMetrics
    archive: WarcArchive | None
    analysis: AnalysisPool | None  # the worker processes; None: the event loop analyses


@dataclass(frozen=True, slots=True)
class Assembled:
    engine: Engine
    fetcher: Fetcher  # opened by the service before the crawl, closed after it


async def assemble(
    config: CrawlConfig,
    opened: Opened,
    *,
    seeds: Sequence[str],
    scope: Scope,
    policy: PriorityFrontier,
    scorer: TopicScorer,
    processors: int,
    on_stored: OnStored | None = None,
) -> Assembled:
    """Build the crawl of `config` over what the service `opened`."""
    db, retry, metrics = opened.db, opened.retry, opened.metrics
    fetch, polite, limits = config.fetch, config.politeness, config.limits
    fetcher = Fetcher(
        user_agent=fetch.user_agent,
        connect_timeout=fetch.connect_timeout,
        total_timeout=fetch.total_timeout,
        max_body_bytes=fetch.max_body_bytes,
        guard=opened.guard,
        resolver=opened.resolver,
        on_request=metrics.requests.inc,  # the figure of requests per stored page
        capture=opened.archive is not None,
    )
    politeness = Politeness(
        delay=polite.delay,
        per_host_concurrency=polite.per_host_concurrency,
        max_backoff=polite.max_backoff,
    )
    robots = RobotsCache(
        user_agent=fetch.user_agent, ttl=polite.robots_ttl, retry=polite.robots_retry
    )
    hosts = HostMemory(
        db=db,
        politeness=politeness,
        robots=robots,
        capacity=limits.host_memory,
        sitemaps=Sitemaps(enabled=config.crawl.sitemaps, max_urls=limits.sitemap_max_urls),
        on_read_back=metrics.hosts_read_back.inc,
        retry=retry,
    )
    relevant_at = config.crawl.relevance_threshold
    revisits = Revisits(
        config.revisits,
        relevance_threshold=relevant_at,
        seeds=seeds,
        cost_of=functools.partial(_revisit_cost, politeness),
    )
    admission = Admission(concurrency=limits.concurrency, target=limits.concurrency)
    wake = admission.changed  # the dispatcher's wake-up call
    leases = _leases(config, db, politeness, retry)
    fetched = FetchedUrls(db, retry=retry)
    turns = HostTurns(politeness=politeness, hosts=hosts, admission=admission)
    visitor = Visitor(
        fetcher=fetcher,
        fetched=fetched,
        turns=turns,
        robots=robots,
        hosts=hosts,
        scope=scope,
        max_redirects=fetch.max_redirects,
        max_retries=polite.max_retries,
        conditional_headers=revisits.conditional_headers,
        holds=(lambda host: True) if leases is None else leases.holds,
    )
    processor = Processor(
        scorer=scorer,
        scope=scope,
        store_text=config.crawl.store_text,
        relevance_threshold=relevant_at,
        link_contexts=policy.reads_link_context,
        near_duplicates=await restored_index(
            db,
            distance=config.crawl.near_duplicate_distance,
            capacity=limits.near_duplicate_memory,
        ),
        languages=frozenset(config.crawl.languages),
    )
    pool = PoolControl(
        make_pool_policy(
            config.pool.fetchers,
            max_fetchers=limits.concurrency,
            buffer=limits.buffer,
            gamma=config.pool.gamma,
            servers=processors,
        ),
        metrics,
        admission,
        buffer=limits.buffer,
    )
    frontier = BoundedFrontier(
        policy,
        capacity=limits.frontier_memory,
        owner=None if leases is None else leases.daemon_id,
        owns=None if leases is None else leases.__contains__,
        budget=HostBudget(limits.max_pages_per_host),
    )
    summary = CrawlSummary()
    feedback = CommitFeedback(
        frontier=frontier,
        fetched=fetched,
        revisits=revisits,
        metrics=metrics,
        wake=wake,
        on_stored=on_stored,
    )
    writer = StorageWriter(db, on_committed=feedback, archive=opened.archive, retry=retry)
    processing = Processing(
        processor=processor,
        writer=writer,
        pool=pool,
        metrics=metrics,
        summary=summary,
        buffer=limits.buffer,
        relevance_threshold=relevant_at,
        wake=wake,
        analysis=opened.analysis,
        fetched=fetched,
    )
    checkpoints = Checkpoints(
        db=db,
        frontier=frontier,
        hosts=hosts,
        politeness=politeness,
        admission=admission,
        revisits=revisits,
        scorer=scorer,
        labels=LabelWatch(db=db, scorer=scorer, relevance_threshold=relevant_at, metrics=metrics),
        writer=writer,
        pool=pool,
        metrics=metrics,
        wake=wake,
        daemon_id=None if leases is None else leases.daemon_id,
    )
    settlement = Settlement(
        frontier=frontier,
        fetched=fetched,
        hosts=hosts,
        writer=writer,
        processing=processing,
        pool=pool,
        metrics=metrics,
        drop_at_full_queue=config.pool.drop_at_full_queue,
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
        )
    engine = Engine(
        db=db,
        frontier=frontier,
        politeness=politeness,
        turns=turns,
        admission=admission,
        fetched=fetched,
        visits=Visits(
            visitor=visitor,
            admission=admission,
            settlement=settlement,
            summary=summary,
            wake=wake,
        ),
        processing=processing,
        writer=writer,
        writer_hold=WriterHold(
            lambda: writer.pending,
            limit=write_hold(limits.concurrency),
            held_seconds=metrics.writer_holds,
        ),
        checkpoints=checkpoints,
        pool=pool,
        revisits=revisits,
        metrics=metrics,
        summary=summary,
        limits=limits,
        stop_grace=fetch.total_timeout + STOP_GRACE_MARGIN,
        drop_at_full_queue=config.pool.drop_at_full_queue,
        archive=opened.archive,
        leases=leases,
        lease_keeper=lease_keeper,
        retry=retry,
    )
    return Assembled(engine, fetcher)


def _leases(
    config: CrawlConfig, db: AsyncEngine, politeness: Politeness, retry: storage.DatabaseRetry
) -> HostLeases | None:
    """In a crawl several daemons may run (a shared database), this daemon's leases of
    its share of the hosts; None on a database of one crawler's own."""
    if not storage.is_shared(db):
        return None
    leases = HostLeases(
        db=db,
        daemon_id=config.cluster.daemon_id or default_daemon_id(),
        lease_seconds=config.cluster.lease_seconds,
        cooldown=politeness.interval,
        retry=retry,
        pages_per_host=config.limits.max_pages_per_host,
    )
    log.info("daemon %s of a shared crawl", leases.daemon_id)
    return leases


def _revisit_cost(politeness: Politeness, host: str) -> float:
    """A re-visit costs one fetch, more on a host that asks for a longer delay."""
    if politeness.delay <= 0:
        return 1.0
    return max(1.0, politeness.interval(host) / politeness.delay)
