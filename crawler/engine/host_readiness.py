"""Which hosts the dispatcher may ask now, and when a parked one's turn comes: politeness's
turns, in a shared crawl only the hosts this daemon holds, and the hosts the frontier
parked woken at their turn from a heap of times (`host_wakeups`). No I/O."""

from __future__ import annotations

from crawler.engine.host_wakeups import HostWakeups
from crawler.engine.leases import HostLeases
from crawler.fetch.politeness import Politeness
from crawler.frontier.frontier_store import BoundedFrontier

MAX_IDLE_WAIT = 1.0  # longest the dispatcher sleeps without being woken


class HostReadiness:
    def __init__(
        self,
        *,
        frontier: BoundedFrontier,
        politeness: Politeness,
        leases: HostLeases | None = None,  # a crawl shared with other daemons
    ) -> None:
        self.frontier = frontier
        self.politeness = politeness
        self.leases = leases
        self.wakeups = HostWakeups()  # when each parked host's turn comes

    def ready(self, host: str, *, now: float) -> bool:
        if not self._held(host):
            return False
        return self.politeness.ready(host, now)

    def turn_comes(self, host: str, now: float) -> bool:
        """Whether `host`, not ready, is closed only by its own turn (not another
        daemon's, not backing off): a policy may wait for it."""
        if not self._held(host):
            return False
        return self.politeness.turn_comes(host, now)

    def until_ready(self, host: str, now: float) -> float:
        """Seconds to `host`'s turn; a visit ending wakes the dispatcher sooner."""
        ready_at = self.politeness.ready_at(host)
        return MAX_IDLE_WAIT if ready_at is None else min(max(ready_at - now, 0.0), MAX_IDLE_WAIT)

    def wake_parked(self, now: float) -> None:
        """Schedule the hosts the frontier parked, and those parked whose turn moved
        (a request ended); the hosts whose turn has come compete again."""
        self._schedule_parked(now)
        for host in self.wakeups.due(now):
            self.frontier.unpark(host)

    def next_turn(self, now: float) -> float | None:
        """When the next parked host's turn comes, the hosts the last pop parked
        scheduled first (else the dispatcher would sleep past them)."""
        self._schedule_parked(now)
        return self.wakeups.next_at()

    def _held(self, host: str) -> bool:
        return self.leases is None or self.leases.holds(host)

    def _schedule_parked(self, now: float) -> None:
        changed = self.politeness.drain_changed()
        changed.update(self.frontier.drain_parked())
        for host in changed:
            if not self.frontier.is_parked(host):
                continue
            if not self._held(host):
                self.wakeups.schedule(host, now + MAX_IDLE_WAIT)  # not this daemon's yet
                continue
            ready_at = self.politeness.ready_at(host)
            if ready_at is None:  # a request in flight: scheduled when it ends
                self.wakeups.cancel(host)
            else:
                self.wakeups.schedule(host, ready_at)
