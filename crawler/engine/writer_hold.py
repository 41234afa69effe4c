"""The writer's hold: no new visit starts while the storage writer is behind.

A page's links reach the frontier only once the writer commits it. With no hold short
of memory's bound (`MAX_WRITE_BACKLOG`), a writer slower than the fetches lets the
frontier choose hundreds of pages behind what was fetched (at one fetch at a time on the
testbed, a median of 31 to 291 pages and up to 1,119, the more the faster the
processor), and a focused crawl's order then depends on the writer's speed. Held to the
visits allowed in flight, the frontier is at most about a round of fetches behind.
"""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import Counter

# results waiting for the writer before dispatching pauses: as many as visits may be in
# flight (`write_hold`), within these bounds
MIN_WRITE_HOLD = 8
MAX_WRITE_BACKLOG = 2_048


def write_hold(concurrency: int) -> int:
    """Results waiting for the writer at which no new visit starts: the visits allowed
    in flight, at least `MIN_WRITE_HOLD` (at one fetch at a time, a hold of one or two
    makes each fetch wait for the last page's commit) and at most `MAX_WRITE_BACKLOG`."""
    return min(MAX_WRITE_BACKLOG, max(concurrency, MIN_WRITE_HOLD))


class WriterHold:
    """Whether the writer holds new visits now, and the time it held them, counted as it
    passes (the dispatcher looks at least once a second while held)."""

    def __init__(self, pending: Callable[[], int], *, limit: int, held_seconds: Counter) -> None:
        self.pending = pending  # results put to the writer and not yet committed
        self.limit = limit
        self.held_seconds = held_seconds
        self._held_since: float | None = None

    def holds(self, now: float) -> bool:
        held = self.pending() >= self.limit
        if self._held_since is not None:
            self.held_seconds.inc(now - self._held_since)
        self._held_since = now if held else None
        return held
