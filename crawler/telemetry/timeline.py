"""The crawl's timeline, kept with the collection: what the counters and gauges read every
checkpoint, and how long politeness kept each host closed since the last one.

Prometheus holds these only while someone scrapes them; the timeline lets `crawler
report` draw a crawl afterwards. Counters restart with each run of the crawler, so each
sample names the run it belongs to (the run's start, unix seconds).
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry

import storage
from crawler.fetch.politeness import HostSlot, Politeness

# the sample's name: the metric it reads
SAMPLED = {
    "stored": "crawler_pages_stored_total",
    "relevant": "crawler_relevant_pages_total",
    "discovered": "crawler_links_discovered_total",
    "frontier": "crawler_frontier_size",
    "frontier_in_memory": "crawler_frontier_in_memory",
    "in_flight": "crawler_fetches_in_flight",
    "fetchers_target": "crawler_fetchers_target",
    "response_queue": "crawler_response_queue_length",
    "write_queue": "crawler_write_queue_length",
    "losses": "crawler_fetch_losses_total",
    "blocked": "crawler_fetches_blocked_total",
    "blocked_seconds": "crawler_fetchers_blocked_seconds_total",
    "requests": "crawler_requests_total",
    "processor_idle_seconds": "crawler_processor_idle_seconds_total",
    "arrival_rate": "crawler_fetch_arrival_rate",
    "service_rate": "crawler_processor_service_rate",
    "pool_expected_cost": "crawler_pool_expected_cost",
    "hosts_waiting": "crawler_hosts_waiting_politeness",
    "tasks": "crawler_asyncio_tasks",
    "resident_bytes": "process_resident_memory_bytes",
    "open_fds": "process_open_fds",
    "sources": "crawler_sources",
    "revisit_new_items": "crawler_revisit_new_items_total",
}
BUDGET_USES = ("revisit", "discovery")


class Timeline:
    def __init__(self, registry: CollectorRegistry, politeness: Politeness, *, run: float) -> None:
        self.registry = registry
        self.politeness = politeness
        self.run = run
        # host: its slot and totals at the last sample, for the hosts then in memory
        self._reported: dict[str, tuple[HostSlot, int, float]] = {}

    def sample(self, taken_at: float) -> storage.TimelineSample:
        # one pass over the registry (each lookup by name would collect all of it)
        read = {
            (sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for metric in self.registry.collect()
            for sample in metric.samples
        }
        values: dict = {"run": self.run}
        for name, metric_name in SAMPLED.items():
            values[name] = read.get((metric_name, ()), 0.0)
        values["budget"] = {
            use: read.get(("crawler_fetch_budget_used_total", (("use", use),)), 0.0)
            for use in BUDGET_USES
        }
        values["politeness"] = self._politeness_since_last()
        return storage.TimelineSample(taken_at, values)

    def _politeness_since_last(self) -> dict[str, list[float]]:
        """Per host that was asked since the last sample: [requests, seconds closed].

        A host leaves memory only once a sample has counted it (`crawler.fetch.host_memory`);
        read back, it has a new slot whose totals start from zero."""
        changed = {}
        reported = {}
        for host, slot in self.politeness.slots():
            last = self._reported.get(host)
            requests, closed = (last[1], last[2]) if last and last[0] is slot else (0, 0.0)
            if slot.requests != requests or slot.closed_seconds != closed:
                changed[host] = [slot.requests - requests, round(slot.closed_seconds - closed, 3)]
            reported[host] = (slot, slot.requests, slot.closed_seconds)
        self._reported = reported
        return changed


def run_totals(samples: list[storage.TimelineSample], name: str) -> float:
    """A counter's total over every run: the sum of each run's last sample (counters
    restart with each run)."""
    last: dict[object, float] = {}
    for sample in samples:  # oldest first
        last[sample.values.get("run")] = float(sample.values.get(name, 0.0))
    return sum(last.values())


def requests_per_page(samples: list[storage.TimelineSample]) -> float | None:
    """HTTP requests sent for each visit stored, over every run; None before any."""
    stored = run_totals(samples, "stored")
    return run_totals(samples, "requests") / stored if stored else None
