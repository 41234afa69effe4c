"""The visits in flight: each a task of the engine's group that fetches its URL
(`crawler.fetch.visit`) and then settles it (`crawler.settle.settle`). A bug met while
visiting one URL is that URL's `internal_error` outcome, never the crawl's end; the
database away for longer than the crawl waits (`storage.DatabaseAway`) is the crawl's.
"""

from __future__ import annotations

import asyncio
import logging

import storage
from crawler.fetch.admission import Admission
from crawler.fetch.visit import Visitor
from crawler.settle.settle import Settlement
from crawler.summary import CrawlSummary
from policies import Candidate

log = logging.getLogger(__name__)


class Visits:
    def __init__(
        self,
        *,
        visitor: Visitor,
        admission: Admission,
        settlement: Settlement,
        summary: CrawlSummary,
        wake: asyncio.Event,
    ) -> None:
        self.visitor = visitor
        self.fetched = visitor.fetched
        self.turns = visitor.turns
        self.admission = admission  # the places of the visits in flight
        self.settlement = settlement
        self.summary = summary
        self.wake = wake  # a visit ended: the dispatcher looks again
        self._tasks: set[asyncio.Task[None]] = set()

    def __len__(self) -> int:
        return len(self._tasks)

    def start(self, group: asyncio.TaskGroup, candidate: Candidate, *, now: float) -> None:
        """Visit `candidate` in a task of `group`; its host's turn is taken already."""
        self.fetched.begin(candidate.url)
        visit = self._visit(candidate, dispatched=now)
        try:
            task = group.create_task(visit)
        except RuntimeError:  # the group is shutting down: a failure elsewhere
            visit.close()
            raise
        self._tasks.add(task)
        self.admission.started()

    async def drain(self, grace: float) -> None:
        """Let the visits in flight finish, for `grace` seconds at most."""
        if not self._tasks:
            return
        _, pending = await asyncio.wait(self._tasks, timeout=grace)
        for task in pending:  # their URLs are still queued in the database
            task.cancel()
        if pending:
            log.warning("cancelled %d visits still running after the grace period", len(pending))
            await asyncio.wait(pending)

    async def _visit(self, candidate: Candidate, *, dispatched: float) -> None:
        try:
            try:
                visit = await self.visitor.visit(candidate)
            except storage.DatabaseAway:
                raise  # the crawl's end, not this URL's
            except Exception:  # a bug met on this URL is its outcome, not the crawl's end
                log.warning("internal error visiting %s", candidate.url, exc_info=True)
                visit = self.visitor.failed(candidate)
            fetching = self.admission.fetching
            if await self.settlement.settle(visit, dispatched=dispatched, fetching=fetching):
                self.summary.fetched += 1
        finally:
            self._tasks.discard(asyncio.current_task())  # type: ignore[arg-type]
            self.admission.ended()
            self.turns.place_freed()
            self.wake.set()
