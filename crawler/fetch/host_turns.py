"""A host's turn, taken and given back by one `async with`.

    async with turns.take(host) as turn:   # waits for the host's turn, and for a place
        response = await fetch(...)
        turn.answered(Feedback.SUCCESS)    # the request was made: the delay is owed

On leaving, the host's slot is given back: with the delay owed after an answer (or a
failure) if a request was made, with none if not (refused by robots.txt, by the
network guard, or cancelled before asking). A visit waiting for a turn holds no place
to fetch (`crawler.fetch.admission`); when the turn comes it goes on once a place is free,
before any new visit.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from crawler.fetch.admission import Admission
from crawler.fetch.host_memory import HostMemory
from crawler.fetch.politeness import Feedback, Politeness
from crawler.waiting import wait_event


@dataclass(slots=True)
class Turn:
    host: str
    waited: float  # seconds spent waiting for it
    feedback: Feedback | None = None  # None: no request was made
    retry_after: float | None = None

    def answered(self, feedback: Feedback, retry_after: float | None = None) -> None:
        """A request was made in this turn, and ended so."""
        self.feedback, self.retry_after = feedback, retry_after


class HostTurns:
    def __init__(
        self,
        *,
        politeness: Politeness,
        hosts: HostMemory,
        admission: Admission,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.politeness = politeness
        self.hosts = hosts
        self.admission = admission
        self.clock = clock
        # a visit ended or a turn was given back: the waiting visits look again
        self._moved = asyncio.Event()

    @contextlib.asynccontextmanager
    async def take(self, host: str, *, taken: bool = False) -> AsyncIterator[Turn]:
        """`host`'s turn for one request; `taken`: the dispatcher has taken it already."""
        turn = Turn(host, 0.0 if taken else await self._wait_for(host))
        try:
            yield turn
        finally:
            if turn.feedback is None:
                self.politeness.release(host)
            else:
                self.politeness.finish(host, self.clock(), turn.feedback, turn.retry_after)
                self.hosts.changed(host)
            self._wake_waiting()  # the host's next turn has a time now

    def waiting_ready(self, now: float) -> int:
        """Waiting visits whose host's turn has come: they go before any new visit."""
        ready = self.politeness.ready
        return sum(n for host, n in self.admission.waiting.items() if ready(host, now))

    def place_freed(self) -> None:
        """A visit ended: the waiting ones look again."""
        self._wake_waiting()

    def _wake_waiting(self) -> None:
        self._moved.set()
        self._moved.clear()

    async def _wait_for(self, host: str) -> float:
        """Wait for `host`'s turn, then take its slot; the seconds waited. A timer set
        for the host's time, or a turn given back or a visit ended, wakes the visit:
        nothing polls."""
        now = started = self.clock()
        if self.politeness.ready(host, now):  # the visit keeps its place to fetch
            self.politeness.start(host, now)
            return 0.0
        self.admission.wait_began(host)
        try:
            while True:
                ready_at = self.politeness.ready_at(host)
                # in flight, or its time come but no place: until a turn or place is freed
                wait = None if ready_at is None or ready_at <= now else ready_at - now
                await wait_event(self._moved, wait)
                now = self.clock()
                if self.politeness.ready(host, now) and self.admission.may_resume():
                    self.politeness.start(host, now)
                    return now - started
        finally:
            self.admission.wait_ended(host)
