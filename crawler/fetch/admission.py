"""Admission: how many visits may fetch at once. Pure state, no I/O, no awaiting.

The engine starts and ends visits; a visit that waits part-way for a host's turn (a
redirect's target, its host again after robots.txt) is not fetching and gives its place
to another meanwhile. Visits fetching stay within the pool's target and `concurrency`,
visits in all within twice `concurrency`. `changed` is set whenever the counts change in
a way that lets the dispatcher start more: it is the dispatcher's wake-up call.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field


@dataclass(slots=True)
class Admission:
    concurrency: int
    target: int  # visits fetching the pool policy wants; set by the pool control
    visits: int = 0  # started and not ended, waiting ones included
    waiting: Counter[str] = field(default_factory=Counter)  # waiting visits, by host
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def fetching(self) -> int:
        """Visits holding a place to fetch."""
        return self.visits - self.waiting.total()

    @property
    def limit(self) -> int:
        return min(self.target, self.concurrency)

    @property
    def waiting_hosts(self) -> Collection[str]:
        return self.waiting.keys()

    def room(self, ready_waiting: int) -> int:
        """New visits that may start now; waiting visits whose host's turn has come
        (`ready_waiting`) go first."""
        return min(self.limit - self.fetching - ready_waiting, 2 * self.concurrency - self.visits)

    def may_resume(self) -> bool:
        """Whether a waiting visit whose turn has come may fetch now."""
        return self.fetching < self.limit

    def started(self) -> None:
        self.visits += 1

    def ended(self) -> None:
        self.visits -= 1
        self.changed.set()

    def wait_began(self, host: str) -> None:
        self.waiting[host] += 1
        self.changed.set()  # its place to fetch is free

    def wait_ended(self, host: str) -> None:
        self.waiting[host] -= 1
        if not self.waiting[host]:
            del self.waiting[host]
