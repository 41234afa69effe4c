"""When each parked host's turn comes: a heap of (time, host), the timer the dispatcher
sleeps on. Pure state, no I/O: the engine tells it when hosts are ready and asks which
are due.

A host the frontier parks (a pop found it not ready) is woken at the time politeness
gives for its next request; one with a request in flight has no such time yet, and is
scheduled when the request ends (`Politeness.drain_changed`). A host scheduled again
keeps only its latest time: the earlier entries go stale in the heap and are skipped.
"""

from __future__ import annotations

import heapq


class HostWakeups:
    def __init__(self) -> None:
        self._heap: list[tuple[float, str]] = []
        self._due: dict[str, float] = {}  # host -> its time in the heap that counts

    def schedule(self, host: str, at: float) -> None:
        self._due[host] = at
        heapq.heappush(self._heap, (at, host))
        if len(self._heap) > 2 * len(self._due) + 64:  # stale entries: start afresh
            self._heap = [(when, name) for name, when in self._due.items()]
            heapq.heapify(self._heap)

    def cancel(self, host: str) -> None:
        self._due.pop(host, None)

    def due(self, now: float) -> list[str]:
        """The hosts whose time has come, each once; they leave the schedule."""
        woken = []
        while self._heap and self._heap[0][0] <= now:
            at, host = heapq.heappop(self._heap)
            if self._due.get(host) == at:
                del self._due[host]
                woken.append(host)
        return woken

    def next_at(self) -> float | None:
        """The earliest time scheduled, if any."""
        while self._heap and self._due.get(self._heap[0][1]) != self._heap[0][0]:
            heapq.heappop(self._heap)  # stale
        return self._heap[0][0] if self._heap else None

    def __len__(self) -> int:
        return len(self._due)
