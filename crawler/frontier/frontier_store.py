"""The frontier in memory up to a bound (`crawler.frontier.frontier_memory`), refilled
from the database, where every queued URL is.

When the frontier in memory falls below half its capacity (and on a restart, when all
of it is in the database), the engine refills it from the database in the policy's
order, as the policy declares it (`refill_order`): the database reads best-first's URLs
by score and breadth-first's by depth (ties to the shallower); for a policy whose order
no column gives (Q-learning), every queued URL is read with what its parent's fetch
showed and the policy's own priorities choose. Such a refill brings each host's best
URLs up to an even share of the capacity first, and then the best of the rest. It skips
the URLs memory already holds or has dispatched and not stored. The database ranks each
host's URLs itself, so that a host with fewer URLs than its share costs no read of the
whole queue to find them all.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import sys
from collections import Counter

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

import storage
from crawler.frontier.frontier_memory import FrontierMemory
from policies import Candidate, LinkContext

REFILL_BATCH = 5_000  # rows the database hands over at a time
HOSTS_READ_AT_ONCE = 500  # hosts whose URLs one query of a refill reads back


class BoundedFrontier(FrontierMemory):
    """The frontier in memory up to a bound, refilled from the database."""

    async def refill(self, db: AsyncEngine) -> int:
        """Bring queued URLs back from the database in the policy's order: the hosts
        whose URLs in memory ran out, if any; then, if memory runs low or no such host
        asked for it (a restart's refill), the best of every host's up to the capacity."""
        stored: set[int] = set()
        self._stored_meanwhile = stored
        try:
            loaded, for_hosts = 0, bool(self._hosts_to_read)
            while self._hosts_to_read:
                hosts = list(itertools.islice(self._hosts_to_read, HOSTS_READ_AT_ONCE))
                for host in hosts:
                    del self._hosts_to_read[host]
                loaded += await self._read_hosts(db, hosts, stored)
            if not for_hosts or self._runs_low():
                loaded += await self._read_back(db, stored)
            return loaded
        finally:
            self._stored_meanwhile = None

    async def _read_hosts(self, db: AsyncEngine, hosts: list[str], stored: set[int]) -> int:
        """Each of `hosts`' best queued URLs up to its share; how many were loaded."""
        hosts = [host for host in hosts if self._mine(host)]
        if not hosts:
            return 0
        share = self.host_share(coming=sum(self.policy.host_size(h) == 0 for h in hosts))
        async with db.connect() as connection:
            if self.policy.refill_order == "priority":
                queued = await self._ranked_of_hosts(connection, hosts, share)
            else:
                by_score = self.policy.refill_order == "score"
                queued = await storage.queued_of_hosts(
                    connection, hosts, by_score=by_score, per_host=share
                )
        chosen = [
            candidate
            for candidate in map(candidate_of, queued)
            if not self._held(candidate.url_id, stored)
        ]
        before = sum(self.spilled_hosts.get(host, 0) for host in hosts)
        self._load(chosen)
        read = Counter(q.host for q in queued)
        for host in hosts:  # fewer than its share queued: memory holds them all now
            if read[host] < share:
                self.spilled_hosts.pop(host, None)
        after = sum(self.spilled_hosts.get(host, 0) for host in hosts)
        self.spilled = max(self.spilled - (before - after), 0)
        return len(chosen)

    async def _ranked_of_hosts(
        self, connection: AsyncConnection, hosts: list[str], share: int
    ) -> list[storage.QueuedUrl]:
        """Every queued URL of `hosts`, ranked by the policy: each host's best `share`."""
        best: dict[str, list[tuple[float, int, int, storage.QueuedUrl]]] = {}
        after = 0
        while True:
            batch = await storage.queued_with_parents(
                connection, limit=REFILL_BATCH, after_id=after, hosts=hosts
            )
            priorities = self.policy.priorities([candidate_of(q) for q in batch]).tolist()
            for queued, priority in zip(batch, priorities, strict=True):
                heap = best.setdefault(queued.host, [])
                entry = (priority, -queued.depth, -queued.id, queued)
                if len(heap) < share:
                    heapq.heappush(heap, entry)
                elif entry[:3] > heap[0][:3]:
                    heapq.heapreplace(heap, entry)
            if len(batch) < REFILL_BATCH:
                break
            after = batch[-1].id
        entries = sorted((e for heap in best.values() for e in heap), key=lambda e: e[:3])
        return [entry[3] for entry in reversed(entries)]

    async def _read_back(self, db: AsyncEngine, stored: set[int]) -> int:
        async with db.connect() as connection:
            hosts = await storage.count_queued_hosts(connection, self.owner)
            # first each host's share, rounded up so that the shares fill memory when
            # every host has as many; then, if some hosts have fewer, the best of the rest
            share = -(-self.capacity // max(hosts, 1))
            if self.policy.refill_order == "priority":
                per_host = Counter(self.policy.host_sizes())
                loaded, full = await self._read_ranked(connection, stored, per_host, share)
            else:
                loaded, full = await self._read_by_share(connection, stored, share)
        # what the database still holds beyond memory
        self.spilled = max(self.spilled - loaded, 1) if full else 0
        if not full:
            self.spilled_hosts.clear()
        return loaded

    async def _read_by_share(
        self, connection: AsyncConnection, stored: set[int], share: int
    ) -> tuple[int, bool]:
        """Each host's best `share` queued URLs, counting those memory already holds,
        then the best of the rest, until memory is full; (URLs loaded, whether memory is
        full)."""
        loaded = 0
        ranked = storage.queued_by_share(
            connection,
            by_score=self.policy.refill_order == "score",
            share=share,
            batch_size=REFILL_BATCH,
            owner=self.owner,
        )
        async with contextlib.aclosing(ranked) as batches:
            async for batch in batches:
                # new URLs may have filled memory while the database was read
                room = self.capacity - len(self.policy)
                fresh = (
                    candidate_of(queued)
                    for queued in batch
                    if not self._held(queued.id, stored) and self._mine(queued.host)
                )
                chosen = list(itertools.islice(fresh, max(room, 0)))
                self._load(chosen)
                loaded += len(chosen)
                if len(self.policy) >= self.capacity:  # before reading another batch
                    return loaded, True
        return loaded, False

    async def _read_ranked(
        self, connection: AsyncConnection, stored: set[int], per_host: Counter[str], share: int
    ) -> tuple[int, bool]:
        """Every queued URL not held, ranked by the policy: each host's best up to its
        share, then the best of the rest while memory has room. Holds at most twice the
        capacity while it reads. (URLs loaded, whether the database holds more.)"""
        # (priority, shallower, earlier, candidate): min-heaps of the best seen so far
        best: dict[str, list[tuple[float, int, int, Candidate]]] = {}
        rest: list[tuple[float, int, int, Candidate]] = []
        waiting, after = 0, 0
        while True:
            batch = await storage.queued_with_parents(
                connection, limit=REFILL_BATCH, after_id=after, owner=self.owner
            )
            candidates = [
                candidate_of(queued)
                for queued in batch
                if not self._held(queued.id, stored) and self._mine(queued.host)
            ]
            waiting += len(candidates)
            for candidate, priority in zip(
                candidates, self.policy.priorities(candidates).tolist(), strict=True
            ):
                entry = (priority, -candidate.depth, -candidate.url_id, candidate)
                heap = best.setdefault(candidate.host, [])
                if len(heap) < share - per_host[candidate.host]:
                    heapq.heappush(heap, entry)
                    continue
                if heap and entry > heap[0]:
                    entry = heapq.heapreplace(heap, entry)
                if len(rest) < self.capacity:
                    heapq.heappush(rest, entry)
                elif entry > rest[0]:
                    heapq.heapreplace(rest, entry)
            if len(batch) < REFILL_BATCH:
                break
            after = batch[-1].id
        # new URLs may have filled memory while the database was read
        room = max(self.capacity - len(self.policy), 0)
        chosen = sorted((entry for heap in best.values() for entry in heap), reverse=True)
        chosen = chosen[:room] + heapq.nlargest(room - min(len(chosen), room), rest)
        self._load([entry[3] for entry in sorted(chosen, reverse=True)])
        return len(chosen), waiting > len(chosen)


def candidate_of(queued: storage.QueuedUrl, context: LinkContext | None = None) -> Candidate:
    """A stored URL as the frontier holds it. Each row read brings its own copy of its
    host's name: one copy a host is kept (a frontier of 100,000 URLs on a few hosts
    holds 6 MB fewer)."""
    return Candidate(
        queued.id,
        queued.url,
        sys.intern(queued.host),
        queued.depth,
        queued.score,
        parent_relevance=queued.parent_relevance,
        revealed=queued.revealed,
        context=context,
    )
