"""The processor's busy and idle time as the pool models count them.

The models' state is X, the pages at the processor (waiting and in service), served by
c servers at min(X, c) mu (M/M/c/K; c = 1 is Talim et al.'s M/M/1/K). Between one
departure and the next, departures come at rate min(X, c) mu, so the busy server-time
between them, the integral of min(X, c) over that span, is exponential with mean 1/mu
whatever X did meanwhile: it is the service duration each departure reports, and the
departures over the busy server-time they report is the maximum-likelihood mu. Timing
each page from its taking to its score instead would count its waits inside the
processor (behind a worker's other page, for its turn to be scored) as service. The
idle time is the models' starvation term: the integral of (c - min(X, c)) / c, one
second a second while every server waits.
"""

from __future__ import annotations

from collections.abc import Callable


class ServerTime:
    """Accrues busy server-time and idle time from the arrivals and departures of pages."""

    def __init__(self, servers: int, clock: Callable[[], float]) -> None:
        if servers < 1:
            raise ValueError(f"a processor needs at least 1 server, not {servers}")
        self.servers = servers
        self.clock = clock
        self.pages = 0  # X: at the processor, waiting or in service
        self._since = clock()
        self._busy = 0.0  # server-seconds since the last departure
        self._idle = 0.0  # idle seconds not yet taken

    def arrival(self) -> None:
        self._accrue()
        self.pages += 1

    def departure(self) -> float:
        """A page left: the busy server-seconds since the previous departure."""
        self._accrue()
        self.pages -= 1
        busy, self._busy = self._busy, 0.0
        return busy

    def take_idle(self) -> float:
        """The idle seconds accrued since the last take."""
        self._accrue()
        idle, self._idle = self._idle, 0.0
        return idle

    def _accrue(self) -> None:
        now = self.clock()
        elapsed, self._since = now - self._since, now
        busy = min(self.pages, self.servers)
        self._busy += busy * elapsed
        self._idle += (self.servers - busy) * elapsed / self.servers
