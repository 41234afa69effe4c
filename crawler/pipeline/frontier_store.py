"""The frontier in memory up to a bound, host by host, the rest in the database.

Every queued URL is a row in the database (state queued) from the moment it is found, so
memory need not hold them all. Memory holds each host's best URLs up to its share of the
capacity (the capacity over the hosts with queued URLs, at least `MIN_HOST_SHARE`), and
at least one URL of every host, whatever the capacity: politeness serves each host in
turn, so memory full of a few hosts' URLs would starve the crawl while the others wait
in the database. A new URL beyond its host's share, or beyond the capacity for a host
already represented, is left to the database ("spilled") and only counted. When a
host's URLs in memory run out and the database holds more of its, that host alone is
read back (its best URLs up to its share), many such hosts in one query. Visits in
flight that come back (throttled, deferred, lost at a full queue) are put back whatever
the count, keeping their tries. A refill may read a new URL between the writer's commit
and its hand-back, and may even dispatch it before the hand-back: the new URL is then
ignored, not taken for a put-back.

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

A host at its page budget (`crawler.pipeline.host_budget`) is closed: its URLs leave
memory, new ones are not held or counted, and refills pass them by; in the database
they stay queued. A URL given back (no page came of its visit) opens its host again,
whose URLs are then read back.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

import storage
from crawler.pipeline.host_budget import HostBudget
from policies import Candidate, LinkContext, PriorityFrontier

REFILL_BATCH = 5_000  # rows the database hands over at a time
MIN_HOST_SHARE = 4  # URLs a host may hold in memory however many hosts share it
HOSTS_READ_AT_ONCE = 500  # hosts whose URLs one query of a refill reads back


class BoundedFrontier:
    def __init__(
        self,
        policy: PriorityFrontier,
        *,
        capacity: int,
        owner: str | None = None,
        owns: Callable[[str], bool] | None = None,
        budget: HostBudget | None = None,
    ) -> None:
        if capacity < 2:
            raise ValueError(f"the frontier's capacity must be at least 2, got {capacity}")
        self.policy = policy
        self.capacity = capacity
        self.owner = owner  # a daemon of a shared crawl: only its hosts' URLs are read
        self.owns = owns  # whether a host's URLs belong here (None: every host's)
        self.budget = budget or HostBudget(None)  # pages a host may have
        self.spilled = 0  # queued in the database only (an estimate, corrected by refills)
        self.spilled_hosts: Counter[str] = Counter()  # the same by host
        # hosts whose URLs in memory ran out while the database holds more of theirs
        self._hosts_to_read: dict[str, None] = {}
        # the URLs dispatched and not yet stored (those queued in memory, the policy
        # knows: `holds`); re-visits of stored pages are neither, and are always held
        self._dispatched: dict[int, str] = {}  # url id -> host
        # stored while a refill reads: the rows it read may still say queued
        self._stored_meanwhile: set[int] | None = None
        self._dropped: set[int] = set()  # in memory, but reached by a redirect: skipped

    def push(self, candidate: Candidate) -> None:
        """Hold a new URL or a re-visit, or leave a new URL to the database when memory
        is full."""
        url_id = candidate.url_id
        if self.owns is not None and not self.owns(candidate.host):
            return  # another daemon's host: its holder reads it from the database
        if not candidate.revisit and not self.budget.allows(candidate.host):
            return  # its host's budget is spent: the URL stays queued in the database
        if candidate.revisit:
            self.policy.push(candidate)
        elif self.policy.holds(url_id) or url_id in self._dispatched:
            return  # a refill brought it first
        elif self._has_room(candidate.host):
            self.policy.push(candidate)
        else:
            self.spilled += 1
            self.spilled_hosts[candidate.host] += 1

    def host_share(self, coming: int = 0) -> int:
        """URLs a host may hold in memory: its even share of the capacity among the
        hosts in memory and `coming` more."""
        hosts = self.policy.host_count() + coming
        return max(MIN_HOST_SHARE, self.capacity // max(hosts, 1))

    def _has_room(self, host: str) -> bool:
        """Whether memory takes another URL of `host`: always its first."""
        held = self.policy.host_size(host)
        if held == 0:
            return True
        return held < self.host_share() and len(self.policy) < self.capacity

    def put_back(self, candidate: Candidate, *, ahead: bool = False) -> None:
        """Take back a dispatched candidate not stored (throttled, deferred, or a loss),
        whatever memory holds; `ahead`: before the candidates it ranks equal with (its
        turn went to its host's robots.txt)."""
        if not candidate.revisit:
            if candidate.url_id not in self._dispatched:
                return  # already put back
            self._dispatched.pop(candidate.url_id, None)
            self._give_back(candidate.host)
            if self.owns is not None and not self.owns(candidate.host):
                return  # the host went to another daemon; the URL is queued in the database
        elif self.owns is not None and not self.owns(candidate.host):
            return
        if ahead:
            self.policy.push_ahead(candidate)
        else:
            self.policy.push(candidate)

    def pop(
        self,
        is_ready: Callable[[str], bool],
        turn_comes: Callable[[str], bool] | None = None,
    ) -> Candidate | None:
        while (
            candidate := self.policy.pop(is_ready, turn_comes)
        ) is not None and not candidate.revisit:
            self._read_back_when_out(candidate.host)
            # a refill may have read a host's URLs back as its budget ran out
            if candidate.url_id not in self._dropped and self.budget.allows(candidate.host):
                self._dispatched[candidate.url_id] = candidate.host
                if self.budget.take(candidate.host):
                    self._close(candidate.host)
                break
            self._dropped.discard(candidate.url_id)
            self.policy.forget(candidate)
        return candidate

    def _read_back_when_out(self, host: str) -> None:
        """`host`'s URLs in memory ran out: read it back if the database holds more."""
        if self.policy.host_size(host) == 0 and self.spilled_hosts.get(host, 0) > 0:
            self._hosts_to_read[host] = None

    def unpark(self, host: str) -> None:
        """`host`'s turn has come: its URLs compete again (`PriorityFrontier.pop`)."""
        self.policy.unpark(host)

    def is_parked(self, host: str) -> bool:
        return self.policy.is_parked(host)

    def drain_parked(self) -> list[str]:
        """The hosts a pop found not ready since the last call."""
        return self.policy.drain_parked()

    @property
    def waiting_for(self) -> str | None:
        """The host the last `pop` chose to wait for (the policy's patience)."""
        return self.policy.waiting_for

    def drop(self, url_ids: Iterable[int]) -> None:
        """These queued URLs were fetched as redirect targets: never dispatch them."""
        for url_id in url_ids:
            if self.policy.holds(url_id):
                self._dropped.add(url_id)
            if self._stored_meanwhile is not None:  # a refill may have read them as queued
                self._stored_meanwhile.add(url_id)

    def raise_scores(self, url_ids: Iterable[int], score: float) -> int:
        """These queued URLs' estimates rose to `score` in the database; those in memory
        rank by it now (the others will when read back). How many moved here."""
        return sum(self.policy.raise_score(url_id, score) for url_id in url_ids)

    def stored(self, url_id: int, *, page: bool = True) -> None:
        """The URL's visit is in the database: it is no longer queued. `page`: whether
        its host gave a page, of its budget."""
        host = self._dispatched.pop(url_id, None)
        if host is not None and not page and self._give_back(host):
            self._hosts_to_read[host] = None  # its URLs left memory when it closed
        if self._stored_meanwhile is not None:
            self._stored_meanwhile.add(url_id)

    def on_fetched(
        self, candidate: Candidate, relevance: float, children: Sequence[Candidate]
    ) -> None:
        self.policy.on_fetched(candidate, relevance, children)

    def _close(self, host: str) -> None:
        """`host`'s budget is spent: its URLs leave memory and are no longer counted."""
        for candidate in self.policy.drop_host(host):
            self._dropped.discard(candidate.url_id)
        self.spilled -= self.spilled_hosts.pop(host, 0)
        self._hosts_to_read.pop(host, None)

    def _give_back(self, host: str) -> bool:
        """A dispatched URL of `host` brought no page; whether that opened the host again,
        whose URLs the database holds (read back when memory has none of them)."""
        if not self.budget.give_back(host):
            return False
        self.spilled_hosts[host] += 1  # at least one: a read corrects the count
        self.spilled += 1
        return True

    def hosts(self) -> Iterator[str]:
        return self.policy.hosts()

    def __len__(self) -> int:
        """Candidates in memory."""
        return len(self.policy)

    @property
    def queued(self) -> int:
        """Candidates in memory and in the database only."""
        return len(self.policy) + self.spilled

    def busy_hosts(self) -> set[str]:
        """The hosts with a URL dispatched and not yet stored (fetching, or fetched and
        waiting for the processor or the writer): still queued in the database."""
        return set(self._dispatched.values())

    def forget(self, hosts: Iterable[str]) -> None:
        """These hosts went to another daemon: their URLs leave memory (they stay queued
        in the database)."""
        for host in hosts:
            for candidate in self.policy.drop_host(host):
                self._dropped.discard(candidate.url_id)
            self.spilled -= self.spilled_hosts.pop(host, 0)

    def resync(self, queued: dict[str, int]) -> None:
        """Take `queued` (URLs queued in the database, by host held) as the truth of what
        waits beyond memory: other daemons add URLs to these hosts."""
        in_memory = self.policy.host_sizes()
        self.spilled_hosts = Counter(
            {
                host: n - in_memory.get(host, 0)
                for host, n in queued.items()
                if self.budget.allows(host)
            }
        )
        self.spilled_hosts = +self.spilled_hosts  # the positive counts only
        self.spilled = sum(self.spilled_hosts.values())

    def spill_count(self, by_host: dict[str, int]) -> None:
        """Take these counts as the URLs queued in the database only (on a restart)."""
        by_host = {host: n for host, n in by_host.items() if self.budget.allows(host)}
        self.spilled_hosts = Counter(by_host)
        self.spilled = sum(by_host.values())

    def needs_refill(self) -> bool:
        return bool(self._hosts_to_read) or self._runs_low()

    def _runs_low(self) -> bool:
        return self.spilled > 0 and len(self.policy) < self.capacity // 2

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

    def _held(self, url_id: int, stored: set[int]) -> bool:
        return self.policy.holds(url_id) or url_id in self._dispatched or url_id in stored

    def _mine(self, host: str) -> bool:
        """Whether `host`'s URLs belong here (a lease given up while a refill reads, a
        budget spent)."""
        return (self.owns is None or self.owns(host)) and self.budget.allows(host)

    def _load(self, candidates: Sequence[Candidate]) -> None:
        """Hold these URLs read back, in this order."""
        for candidate in candidates:
            self._take_back(candidate.host)
        self.policy.push_many(candidates)

    def _take_back(self, host: str) -> None:
        left = self.spilled_hosts.pop(host, 0) - 1
        if left > 0:
            self.spilled_hosts[host] = left

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
