"""Prometheus metrics, built on an injected registry (tests use a fresh one).

Names follow Prometheus conventions: the `crawler_` prefix, base units, `_total`
counters. Labels come only from closed sets; never a host or a URL.
"""

from __future__ import annotations

import platform

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    Info,
    ProcessCollector,
)

from crawler.counts import is_page
from crawler.fetch.sitemaps import RESULTS as SITEMAP_RESULTS
from crawler.outcomes import Outcome

FETCH_SECONDS_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)
RELEVANCE_BUCKETS = (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0)


class CrawlerMetrics:
    def __init__(self, registry: CollectorRegistry, *, version: str) -> None:
        self.registry = registry
        # process_resident_memory_bytes, process_open_fds, process_cpu_seconds_total: a
        # long crawl's memory and descriptors should stay flat
        ProcessCollector(registry=registry)
        self.fetches = Counter(
            "crawler_fetches", "URLs visited, by outcome", ["outcome"], registry=registry
        )
        for outcome in Outcome:  # every series exists from the start
            if outcome.fetched_page:
                self.fetches.labels(outcome=outcome.value)
        self.response_bytes = Counter(
            "crawler_response_bytes", "Body bytes read from responses", registry=registry
        )
        self.pages_fetched = Counter(
            "crawler_pages_fetched",
            "Visits that stored an answer without error (crawler.counts)",
            registry=registry,
        )
        self.pages_stored = Counter(
            "crawler_pages_stored", "Fetch results committed to the collection", registry=registry
        )
        self.relevant_pages = Counter(
            "crawler_relevant_pages",
            "Pages at or above the relevance threshold",
            registry=registry,
        )
        self.links_discovered = Counter(
            "crawler_links_discovered", "New URLs added to the frontier", registry=registry
        )
        self.sitemaps = Counter(
            "crawler_sitemaps",
            "Sitemap files asked for, by result: read, cut (read to a limit, the rest "
            "ignored), failed, redirected; not pages",
            ["result"],
            registry=registry,
        )
        for result in SITEMAP_RESULTS:
            self.sitemaps.labels(result=result)
        self.sitemap_urls = Counter(
            "crawler_sitemap_urls",
            "New URLs sitemaps added to the frontier",
            registry=registry,
        )
        self.links_raised = Counter(
            "crawler_links_raised",
            "Queued URLs a relevant page linked to again, ranked higher",
            registry=registry,
        )
        self.fetch_duration = Histogram(
            "crawler_fetch_duration_seconds",
            "Time from sending a page's request to reading its whole response",
            buckets=FETCH_SECONDS_BUCKETS,
            registry=registry,
        )
        self.relevance = Histogram(
            "crawler_page_relevance",
            "Relevance of parsed pages to the topic (cosine similarity, moved by the labels)",
            buckets=RELEVANCE_BUCKETS,
            registry=registry,
        )
        self.frontier_size = Gauge(
            "crawler_frontier_size", "URLs known and not yet fetched", registry=registry
        )
        self.frontier_in_memory = Gauge(
            "crawler_frontier_in_memory",
            "Frontier URLs held in memory (the rest wait in the database)",
            registry=registry,
        )
        self.hosts_in_memory = Gauge(
            "crawler_hosts_in_memory",
            "Hosts whose politeness and robots.txt state is held in memory",
            registry=registry,
        )
        self.hosts_leased = Gauge(
            "crawler_hosts_leased",
            "Hosts this daemon holds a lease of, in a crawl shared by several (0 alone)",
            registry=registry,
        )
        self.host_leases_claimed = Counter(
            "crawler_host_leases_claimed",
            "Host leases this daemon has claimed: new hosts, and hand-overs from others",
            registry=registry,
        )
        self.hosts_read_back = Counter(
            "crawler_hosts_read_back",
            "Hosts whose state a visit read back from the database (memory had dropped it)",
            registry=registry,
        )
        self.database_retries = Counter(
            "crawler_database_retries",
            "Database reads and writes run again: the database was away, or chose the "
            "transaction as a deadlock's victim",
            registry=registry,
        )
        self.in_flight = Gauge("crawler_fetches_in_flight", "Visits under way", registry=registry)
        self.hosts_waiting = Gauge(
            "crawler_hosts_waiting_politeness",
            "Hosts with queued URLs that politeness holds back",
            registry=registry,
        )
        self.tasks = Gauge(
            "crawler_asyncio_tasks",
            "Tasks alive on the crawler's event loop (a leak shows as steady growth)",
            registry=registry,
        )
        self.response_queue = Gauge(
            "crawler_response_queue_length",
            "Pages at the processor: waiting, and the one in service",
            registry=registry,
        )
        self.write_queue = Gauge(
            "crawler_write_queue_length", "Results waiting to be written", registry=registry
        )
        self.fetch_losses = Counter(
            "crawler_fetch_losses",
            "Pages that met a full processor queue and were dropped, their URL put back "
            "(only with full_queue = drop)",
            registry=registry,
        )
        self.fetches_blocked = Counter(
            "crawler_fetches_blocked",
            "Pages that met a full processor queue and waited with their fetcher for room",
            registry=registry,
        )
        self.fetchers_blocked = Counter(
            "crawler_fetchers_blocked_seconds",
            "Time fetchers spent holding a page while the processor queue was full",
            registry=registry,
        )
        self.writer_holds = Counter(
            "crawler_dispatch_held_by_writer_seconds",
            "Time no new visit could start because the storage writer was behind",
            registry=registry,
        )
        self.focus_waits = Counter(
            "crawler_focus_waits",
            "Times the dispatcher left a fetch slot idle for a busy host whose URL ranks "
            "far above every ready one (the frontier's patience)",
            registry=registry,
        )
        self.requests = Counter(
            "crawler_requests",
            "HTTP requests sent: pages, robots.txt, every redirect hop and every retry",
            registry=registry,
        )
        self.processor_idle = Counter(
            "crawler_processor_idle_seconds",
            "Time the processor idled (starvation): its c servers' idle time over c",
            registry=registry,
        )
        self.pages_analysed = Counter(
            "crawler_pages_analysed",
            "Pages parsed and counted, on the event loop or in the worker processes",
            ["where"],
            registry=registry,
        )
        for where in ("event_loop", "workers"):
            self.pages_analysed.labels(where=where)
        self.fetchers_target = Gauge(
            "crawler_fetchers_target", "Visits the pool policy wants in flight", registry=registry
        )
        self.arrival_rate = Gauge(
            "crawler_fetch_arrival_rate",
            "Estimated pages per second one active fetcher brings (lambda)",
            registry=registry,
        )
        self.arrival_rate_stddev = Gauge(
            "crawler_fetch_arrival_rate_stddev",
            "Uncertainty (standard deviation) of the lambda estimate",
            registry=registry,
        )
        self.service_rate = Gauge(
            "crawler_processor_service_rate",
            "Estimated pages per second one of the processor's servers handles while busy (mu)",
            registry=registry,
        )
        self.service_rate_stddev = Gauge(
            "crawler_processor_service_rate_stddev",
            "Uncertainty (standard deviation) of the mu estimate",
            registry=registry,
        )
        self.pool_expected_cost = Gauge(
            "crawler_pool_expected_cost",
            "The pool policy's own forecast of gamma * P(idle) + loss rate",
            registry=registry,
        )
        self.pool_gamma = Gauge(
            "crawler_pool_gamma",
            "The weight of idling against losses in the pool's cost",
            registry=registry,
        )
        self.fetches_by_use = Counter(
            "crawler_fetch_budget_used",
            "Visits stored, by what they were for: re-visiting a source or discovery",
            ["use"],
            registry=registry,
        )
        for use in ("revisit", "discovery"):
            self.fetches_by_use.labels(use=use)
        self.revisits = Counter(
            "crawler_revisits",
            "Re-visits of sources, by what they found",
            ["result"],
            registry=registry,
        )
        for result in ("new_items", "unchanged", "not_modified", "failed"):
            self.revisits.labels(result=result)
        self.revisit_new_items = Counter(
            "crawler_revisit_new_items",
            "New URLs that re-visits of sources found",
            registry=registry,
        )
        self.revisits_planned = Counter(
            "crawler_revisits_planned",
            "Re-visits the re-visit policy chose",
            registry=registry,
        )
        self.sources = Gauge(
            "crawler_sources", "Pages tracked as sources to re-visit", registry=registry
        )
        self.revisit_budget = Gauge(
            "crawler_revisit_budget",
            "Re-visit cost allowed a period (a source costs 1 at the crawl's delay)",
            registry=registry,
        )
        self.labels = Gauge(
            "crawler_labels",
            "Pages the user labelled relevant or not, which the topic model learns from",
            registry=registry,
        )
        self.build_info = Info("crawler_build", "Version of the crawler", registry=registry)
        self.build_info.info({"version": version, "python": platform.python_version()})

    def observe_outcome(self, outcome: Outcome) -> None:
        self.fetches.labels(outcome=outcome.value).inc()
        if is_page(outcome):  # never retried: counted once, as the summary counts it
            self.pages_fetched.inc()
