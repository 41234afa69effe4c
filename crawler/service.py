"""Running a crawl from its settings: open what the crawl needs and closes after it,
build the crawl (`crawler.engine.assembly`), serve metrics and the API, obey signals."""

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
from crawler.engine.assembly import Opened, assemble
from crawler.engine.engine import Engine
from crawler.fetch.netguard import NetworkGuard
from crawler.fetch.resolver import CachingResolver
from crawler.frontier.feedback import OnStored
from crawler.memory import collect_cycles_in_bulk, return_large_blocks
from crawler.net.scope import Scope
from crawler.net.url_filters import UrlFilters
from crawler.net.url_parameters import strip_parameters
from crawler.process import language
from crawler.process.analysis_pool import AnalysisPool
from crawler.startup import (
    check_seeds_admitted,
    check_seeds_reachable,
    open_archive,
    parse_seeds,
    record_start,
)
from crawler.store.warc_files import WarcArchive
from crawler.summary import CrawlSummary
from crawler.telemetry.console import Console
from crawler.telemetry.metrics import CrawlerMetrics
from crawler.web.daemon_server import DaemonServer
from policies import TopicScorer, make_frontier_policy

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
    server: DaemonServer | None = None
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
        if analysis is None or config.inline_below > 0:
            # the language model (some 80 MB, 0.6 s of CPU) loads before the crawl, not on
            # its loop at the first page analysed there, which would stall every visit
            await asyncio.to_thread(language.load_model)
        await storage.check_writable(db)
        await storage.create_schema(db)
        crawl_id = await record_start(db, config, seeds)
        if config.warc is not None:
            archive = await open_archive(db, config, crawl_id)
        registry = registry if registry is not None else CollectorRegistry()
        metrics = CrawlerMetrics(registry, version=__version__)
        # every read and write of the crawl waits out the database away, up to a limit
        retry = storage.DatabaseRetry(
            db, patience=config.db_outage_seconds, on_retry=metrics.database_retries.inc
        )
        opened = Opened(
            db=db,
            retry=retry,
            guard=guard,
            resolver=resolver,
            metrics=metrics,
            archive=archive,
            analysis=analysis,
        )
        crawl = await assemble(
            config,
            opened,
            seeds=[str(seed) for seed in seeds],
            scope=scope,
            policy=frontier,
            scorer=scorer,
            processors=processors,
            on_stored=on_stored,
        )
        engine, fetcher = crawl.engine, crawl.fetcher
        if config.metrics_port:
            health = functools.partial(_health, engine, retry)
            server = DaemonServer(config, registry, engine, scope, health)
            await server.start()
            log.info("metrics at http://%s:%d/metrics", config.metrics_host, config.metrics_port)
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
        log.info("crawl stopped: %s", summary.why_stopped)
        return summary
    finally:
        if server is not None:  # stopped however the crawl ended, a cancel at start too
            await _close_quietly("HTTP server", server.stop())
        if analysis is not None:
            await _close_quietly("analysis workers", analysis.close())
        if archive is not None:
            archive.release()  # still open only if the crawl failed
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
