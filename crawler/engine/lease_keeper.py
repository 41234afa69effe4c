"""Keeping a shared crawl's host leases while it runs (`crawler.engine.leases`): joined
at the start, renewed and rebalanced every interval, left at a clean stop.

A host with a visit not yet stored is never given up: its URL is still queued in the
database, and a daemon taking the host over would fetch it again.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from crawler.engine.leases import HostLeases
from crawler.fetch.politeness import Politeness
from crawler.frontier.frontier_store import BoundedFrontier
from crawler.summary import CrawlSummary
from crawler.telemetry.metrics import CrawlerMetrics


class LeaseKeeper:
    def __init__(
        self,
        leases: HostLeases,
        *,
        frontier: BoundedFrontier,
        politeness: Politeness,
        metrics: CrawlerMetrics,
        summary: CrawlSummary,
        wake: asyncio.Event,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.leases = leases
        self.frontier = frontier
        self.politeness = politeness
        self.metrics = metrics
        self.summary = summary
        self.wake = wake  # the dispatcher's: hosts came or went
        self.clock = clock
        self._started = clock()

    async def join(self) -> None:
        self._started = self.clock()
        await self.leases.join()
        await self.renew()

    async def run(self) -> None:
        while True:
            await asyncio.sleep(self.leases.interval)
            await self.renew()

    async def renew(self) -> None:
        busy = self.frontier.busy_hosts()
        busy.update(host for host, slot in self.politeness.slots() if slot.in_flight > 0)
        change = await self.leases.tick(busy=busy, pages=self.summary.fetched, rate=self._rate())
        self.frontier.forget(change.lost)
        self.frontier.resync(change.queued)
        self.metrics.hosts_leased.set(len(self.leases))
        self.metrics.host_leases_claimed.inc(len(change.claimed))
        self.wake.set()

    async def leave(self) -> None:
        """What this daemon held is stored: its hosts go to the others."""
        await self.leases.leave(pages=self.summary.fetched, rate=self._rate())

    def _rate(self) -> float:
        return self.summary.fetched / max(self.clock() - self._started, 1e-9)
