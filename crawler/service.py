"""Running a crawl from its settings: build the parts, serve metrics, obey signals."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import signal
import time
from collections.abc import Awaitable

from prometheus_client import CollectorRegistry

import storage
from crawler import __version__
from crawler.config import CrawlConfig
from crawler.cores import compute_on_the_calling_thread
from crawler.counts import Counts
from crawler.engine.engine import CrawlSummary, Engine, EngineLimits
from crawler.engine.feedback import OnStored
from crawler.engine.leases import HostLeases, default_daemon_id
from crawler.engine.pool_control import PoolControl
from crawler.engine.revisits import Revisits
from crawler.memory import collect_cycles_in_bulk, return_large_blocks
from crawler.net.admission import Admission
from crawler.net.fetched_urls import FetchedUrls
from crawler.net.fetcher import Fetcher
from crawler.net.host_memory import HostMemory
from crawler.net.host_turns import HostTurns
from crawler.net.netguard import NetworkGuard
from crawler.net.politeness import Politeness
from crawler.net.resolver import CachingResolver
from crawler.net.robots import RobotsCache
from crawler.net.scope import Scope
from crawler.net.sitemaps import Sitemaps
from crawler.net.url_filters import UrlFilters
from crawler.net.urls import strip_parameters
from crawler.net.visit import Visitor
from crawler.pipeline.analysis_pool import AnalysisPool
from crawler.pipeline.near_duplicate_index import restored_index
from crawler.pipeline.processor import Processor
from crawler.pipeline.warc_files import WarcArchive
from crawler.startup import (
    check_seeds_admitted,
    check_seeds_reachable,
    open_archive,
    parse_seeds,
    record_start,
)
from crawler.telemetry.console import Console
from crawler.telemetry.metrics import CrawlerMetrics
from crawler.telemetry.metrics_server import MetricsServer
from crawler.web import Api, DatabaseThread, build_app
from policies import TopicScorer, make_frontier_policy, make_pool_policy

log = logging.getLogger(__name__)


async def run_crawl(
    config: CrawlConfig,
    *,
    registry: CollectorRegistry | None = None,
    handle_signals: bool = True,
    progress: Console | None = None,
    on_stored: OnStored | None = None,
    tune_process: bool = True,
) -> CrawlSummary:
    """Run a crawl to its end and say what it did. `on_stored` is told each page fetched
    once it is committed; `tune_process` sets the process-wide tuning a crawler's own
    process wants (the allocator, the garbage collector, BLAS threads), which a program
    that runs a crawl among its other work may not."""
    config.check_runnable()
    if tune_process:
        return_large_blocks()  # a big page's body leaves with it (crawler.memory)
        collect_cycles_in_bulk()  # each 10,000 young objects, not 700 (crawler.memory)
        compute_on_the_calling_thread()  # no BLAS thread spinning on a core (crawler.cores)
    strip_parameters(config.strip_params)  # before any URL is read
    seeds = parse_seeds(config.seeds)
    guard = NetworkGuard(
        allow_private=config.allow_private_networks, allowed=config.allowed_networks
    )
    resolver = CachingResolver(nameservers=config.dns_servers)  # the crawl's, closed last
    try:
        await check_seeds_reachable(seeds, guard, resolver)
        scope = Scope.of(
            config.allowed_domains or {seed.raw_host or "" for seed in seeds},
            config.max_depth,
            UrlFilters.of(config.include_urls, config.exclude_urls),
        )
        check_seeds_admitted(seeds, scope.urls)
        frontier = make_frontier_policy(
            config.policy, patience=config.patience, relevant_at=config.relevance_threshold
        )
        scorer = TopicScorer(feedback_weight=config.topic_feedback).fit([config.topic])
    except BaseException:
        await resolver.close()
        raise

    db = storage.open_engine(config.db)
    lock: storage.CrawlFileLock | None = None
    archive: WarcArchive | None = None
    processors = config.processor_count()
    analysis: AnalysisPool | None = None
    api_database: DatabaseThread | None = None  # the API's reads and writes (crawler.web)
    try:
        lock = storage.lock_for_crawl(db)  # one crawl at a time on a SQLite file
        if processors > 1:
            analysis = await AnalysisPool.start(
                processors,
                scorer.n_features,
                scope,
                inline_below=config.inline_below,
                stripped=config.strip_params,
            )
        await storage.check_writable(db)
        await storage.create_schema(db)
        shared = storage.is_shared(db)
        crawl_id = await record_start(db, config, seeds)
        if config.warc is not None:
            archive = await open_archive(db, config, crawl_id)
        registry = registry if registry is not None else CollectorRegistry()
        metrics = CrawlerMetrics(registry, version=__version__)
        # every read and write of the crawl waits out the database away, up to a limit
        retry = storage.DatabaseRetry(
            db, patience=config.db_outage_seconds, on_retry=metrics.database_retries.inc
        )
        fetcher = Fetcher(
            user_agent=config.user_agent,
            connect_timeout=config.connect_timeout,
            total_timeout=config.total_timeout,
            max_body_bytes=config.max_body_bytes,
            guard=guard,
            resolver=resolver,
            on_request=metrics.requests.inc,  # the figure of requests per stored page
            capture=archive is not None,
        )
        politeness = Politeness(
            delay=config.delay,
            per_host_concurrency=config.per_host_concurrency,
            max_backoff=config.max_backoff,
        )
        robots = RobotsCache(
            user_agent=config.user_agent, ttl=config.robots_ttl, retry=config.robots_retry
        )
        hosts = HostMemory(
            db=db,
            politeness=politeness,
            robots=robots,
            capacity=config.host_memory,
            sitemaps=Sitemaps(enabled=config.sitemaps, max_urls=config.sitemap_max_urls),
            on_read_back=metrics.hosts_read_back.inc,
            retry=retry,
        )
        revisits = Revisits(
            config.revisits,
            relevance_threshold=config.relevance_threshold,
            seeds=[str(seed) for seed in seeds],
            cost_of=functools.partial(_revisit_cost, politeness),
        )
        admission = Admission(concurrency=config.concurrency, target=config.concurrency)
        leases = None
        if shared:  # several daemons may run this crawl: each holds a share of the hosts
            leases = HostLeases(
                db=db,
                daemon_id=config.daemon_id or default_daemon_id(),
                lease_seconds=config.lease_seconds,
                cooldown=politeness.interval,
                retry=retry,
            )
            log.info("daemon %s of a shared crawl", leases.daemon_id)
        visitor = Visitor(
            fetcher=fetcher,
            fetched=FetchedUrls(db, retry=retry),
            turns=HostTurns(politeness=politeness, hosts=hosts, admission=admission),
            robots=robots,
            hosts=hosts,
            scope=scope,
            max_redirects=config.max_redirects,
            max_retries=config.max_retries,
            conditional_headers=revisits.conditional_headers,
            holds=(lambda host: True) if leases is None else leases.holds,
        )
        engine = Engine(
            db=db,
            frontier=frontier,
            politeness=politeness,
            hosts=hosts,
            visitor=visitor,
            processor=Processor(
                scorer=scorer,
                scope=scope,
                store_text=config.store_text,
                relevance_threshold=config.relevance_threshold,
                link_contexts=frontier.reads_link_context,
                near_duplicates=await restored_index(
                    db,
                    distance=config.near_duplicate_distance,
                    capacity=config.near_duplicate_memory,
                ),
                languages=frozenset(config.languages),
            ),
            scorer=scorer,
            metrics=metrics,
            revisits=revisits,
            archive=archive,
            analysis=analysis,
            leases=leases,
            retry=retry,
            pool=PoolControl(
                make_pool_policy(
                    config.fetchers,
                    max_fetchers=config.concurrency,
                    buffer=config.buffer,
                    gamma=config.gamma,
                    servers=processors,
                ),
                metrics,
                admission,
                buffer=config.buffer,
            ),
            limits=EngineLimits(
                max_pages=config.max_pages,
                duration=config.duration,
                concurrency=config.concurrency,
                max_retries=config.max_retries,
                buffer=config.buffer,
                relevance_threshold=config.relevance_threshold,
                stop_grace=config.total_timeout + 5.0,
                drop_at_full_queue=config.full_queue == "drop",
                frontier_memory=config.frontier_memory,
                max_pages_per_host=config.max_pages_per_host,
            ),
            on_stored=on_stored,
        )
        server = None
        if config.metrics_port:
            api_database = DatabaseThread(config.db)
            server = MetricsServer(
                registry,
                host=config.metrics_host,
                port=config.metrics_port,
                health=functools.partial(_health, engine, retry),
                app=build_app(
                    Api(
                        engine=engine,
                        database=api_database,
                        scope=scope,
                        token=config.api_token,
                        relevance_threshold=config.relevance_threshold,
                    ),
                    host_names=config.api_hosts,
                ),
            )
            await server.start()
            log.info("metrics at %s", server.url)
        await fetcher.open()
        reporter = asyncio.create_task(_report_progress(engine, progress, config.progress_interval))
        try:
            with _stop_on_signals(engine, enabled=handle_signals):
                log.info(
                    "crawl started: %d seeds, policy %s, %d processors",
                    len(seeds),
                    config.policy,
                    processors,
                )
                summary = await engine.run()
        finally:
            reporter.cancel()
            # its own cancellation is not an error; the crawl's is, and goes on up
            await asyncio.gather(reporter, return_exceptions=True)
            await _close_quietly("fetcher", fetcher.close())
            if server is not None:
                await _close_quietly("metrics server", server.stop())
        log.info("crawl stopped: %s", summary.why_stopped)
        return summary
    finally:
        if analysis is not None:
            await _close_quietly("analysis workers", analysis.close())
        if archive is not None:
            archive.release()  # still open only if the crawl failed
        if api_database is not None:
            await _close_quietly("the API's database", api_database.close())
        await _close_quietly("database", db.dispose())
        await _close_quietly("resolver", resolver.close())
        if lock is not None:  # after the crawl's last write
            lock.release()


def _health(engine: Engine, retry: storage.DatabaseRetry) -> dict[str, object]:
    """/healthz: ok, or degraded while the database is away (the crawl waits for it)."""
    away = retry.away
    if away is None:
        return {"status": "ok", "in_flight": engine.in_flight}
    seconds = retry.clock() - away.since
    return {
        "status": "degraded",
        "in_flight": engine.in_flight,
        "database": f"{retry.where} away for {seconds:.0f} s: {away.error}",
    }


def _revisit_cost(politeness: Politeness, host: str) -> float:
    """A re-visit costs one fetch, more on a host that asks for a longer delay."""
    if politeness.delay <= 0:
        return 1.0
    return max(1.0, politeness.interval(host) / politeness.delay)


async def _close_quietly(what: str, closing: Awaitable[object]) -> None:
    try:
        await closing
    except Exception:
        log.exception("error while closing the %s", what)


# Ctrl-C, a service manager's stop, a closed terminal: each drains the crawl
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def _stop_on_signals(engine: Engine, *, enabled: bool):  # type: ignore[no-untyped-def]
    """First SIGINT, SIGTERM or SIGHUP: finish what is in flight. Second: stop now."""
    if not enabled:
        yield
        return
    loop = asyncio.get_running_loop()
    main = asyncio.current_task()
    received = 0

    def on_signal(name: str) -> None:
        nonlocal received
        received += 1
        if received == 1:
            log.info("%s: finishing what is in flight (again to stop at once)", name)
            engine.request_stop()
        elif main is not None:
            main.cancel()

    for sig in STOP_SIGNALS:
        loop.add_signal_handler(sig, on_signal, sig.name)
    try:
        yield
    finally:
        for sig in STOP_SIGNALS:
            loop.remove_signal_handler(sig)


async def _report_progress(engine: Engine, console: Console | None, interval: float) -> None:
    """A live line on a terminal; a log line every `interval` seconds otherwise."""
    live = console is not None and console.live
    period = 1.0 if live else interval
    started = time.monotonic()
    while True:
        await asyncio.sleep(period)
        summary = engine.summary
        counts = Counts.of(summary.outcomes, relevant=summary.relevant)
        elapsed = time.monotonic() - started
        line = (
            f"pages {counts.pages}  relevant {counts.relevant}  "
            f"frontier {len(engine.frontier)}  in flight {engine.in_flight}  "
            f"{summary.fetched / elapsed:.1f} pages/s"
        )
        if live:
            assert console is not None
            console.show_progress(line)
        else:
            fields = {"pages": counts.pages, "relevant": counts.relevant}
            log.info("progress: %s", line, extra={**fields, "frontier": len(engine.frontier)})
