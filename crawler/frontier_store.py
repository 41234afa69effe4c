"""The frontier in memory up to a bound, the rest in the database.

Every queued URL is a row in the database (state queued) from the moment it is found, so
memory need not hold them all: beyond `capacity` candidates, new ones are left to the
database ("spilled") and only counted. Visits in flight that come back (throttled,
deferred, lost at a full queue) are put back whatever the count, keeping their tries.
A refill may read a new URL between the writer's commit and its hand-back, and may even
dispatch it before the hand-back: the new URL is then ignored, not taken for a put-back.
When the frontier in memory falls below half its capacity, the engine refills it from
the database in the policy's order (highest score first for best-first, shallowest
first otherwise, ties to the shallower), skipping the URLs it already holds or has
dispatched and not stored, and taking no more than an even share of the capacity from
any one host: politeness serves each host in turn, so memory full of a few hosts' URLs
would starve the crawl.
For the same reason a host whose URLs wait in the database only, while memory has room,
brings a refill sooner (at most every STARVED_REFILL_INTERVAL seconds): otherwise the
hosts left in memory as it drains are the few with the most URLs, and politeness holds
the crawl to their pace until memory is half empty.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Sequence

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

import storage
from policies import Candidate, PriorityFrontier

REFILL_BATCH = 5_000  # rows read a query
STARVED_REFILL_INTERVAL = 30.0  # seconds: a refill reads many rows, so not too often
STARVED_REFILL_ROOM = 8  # ... and only with an eighth of the capacity free to fill


class BoundedFrontier:
    def __init__(self, policy: PriorityFrontier, *, capacity: int) -> None:
        if capacity < 2:
            raise ValueError(f"the frontier's capacity must be at least 2, got {capacity}")
        self.policy = policy
        self.capacity = capacity
        self.by_score = policy.name != "bfs"
        self.spilled = 0  # queued in the database only (an estimate, corrected by refills)
        self.spilled_hosts: Counter[str] = Counter()  # the same by host
        self._starved = False  # a host waits in the database only: refill before half
        self._last_starved_refill = float("-inf")
        # queued URLs in memory, and those dispatched and not yet stored; re-visits of
        # stored pages are neither, and are always held
        self._in_memory: set[int] = set()
        self._dispatched: set[int] = set()
        # stored while a refill reads: the rows it read may still say queued
        self._stored_meanwhile: set[int] | None = None

    def push(self, candidate: Candidate) -> None:
        """Hold a new URL or a re-visit, or leave a new URL to the database when memory
        is full."""
        url_id = candidate.url_id
        if candidate.revisit:
            self.policy.push(candidate)
        elif url_id in self._in_memory or url_id in self._dispatched:
            return  # a refill brought it first
        elif len(self.policy) >= self.capacity:
            self.spilled += 1
            self.spilled_hosts[candidate.host] += 1
        else:
            self._in_memory.add(url_id)
            self.policy.push(candidate)

    def put_back(self, candidate: Candidate) -> None:
        """Take back a dispatched candidate not stored (throttled, deferred, or a loss),
        whatever memory holds."""
        if not candidate.revisit:
            if candidate.url_id not in self._dispatched:
                return  # already put back
            self._dispatched.discard(candidate.url_id)
            self._in_memory.add(candidate.url_id)
        self.policy.push(candidate)

    def pop(self, is_ready: Callable[[str], bool]) -> Candidate | None:
        candidate = self.policy.pop(is_ready)
        if candidate is not None and not candidate.revisit:
            self._in_memory.discard(candidate.url_id)
            self._dispatched.add(candidate.url_id)
        return candidate

    def stored(self, url_id: int) -> None:
        """The URL's visit is in the database: it is no longer queued."""
        self._dispatched.discard(url_id)
        if self._stored_meanwhile is not None:
            self._stored_meanwhile.add(url_id)

    def on_fetched(
        self, candidate: Candidate, relevance: float, children: Sequence[Candidate]
    ) -> None:
        self.policy.on_fetched(candidate, relevance, children)

    def hosts(self) -> Iterator[str]:
        return self.policy.hosts()

    def __len__(self) -> int:
        """Candidates in memory."""
        return len(self.policy)

    @property
    def queued(self) -> int:
        """Candidates in memory and in the database only."""
        return len(self.policy) + self.spilled

    def spill_count(self, by_host: dict[str, int]) -> None:
        """Take these counts as the URLs queued in the database only (on a restart)."""
        self.spilled_hosts = Counter(by_host)
        self.spilled = sum(by_host.values())

    def needs_refill(self) -> bool:
        return self.spilled > 0 and (self._starved or len(self.policy) < self.capacity // 2)

    def check_starved(self, now: float) -> bool:
        """Whether a host waits in the database only while memory has room for it; if so,
        and the last such refill is long enough ago, the next `needs_refill` says yes.
        Costs a pass over the hosts: call it now and then, not per dispatch."""
        if (
            self._starved
            or now - self._last_starved_refill < STARVED_REFILL_INTERVAL
            or self.capacity - len(self.policy) < self.capacity // STARVED_REFILL_ROOM
        ):
            return self._starved
        in_memory = self.policy.host_sizes()
        if any(host not in in_memory for host in self.spilled_hosts):
            self._starved = True
            self._last_starved_refill = now
        return self._starved

    async def refill(self, db: AsyncEngine) -> int:
        """Bring queued URLs back from the database, best first, up to the capacity."""
        self._starved = False
        stored: set[int] = set()
        self._stored_meanwhile = stored
        try:
            return await self._read_back(db, stored)
        finally:
            self._stored_meanwhile = None

    async def _read_back(self, db: AsyncEngine, stored: set[int]) -> int:
        async with db.connect() as connection:
            hosts = await storage.count_queued_hosts(connection)
            per_host = Counter(self.policy.host_sizes())
            # first each host's share; then, if the others ran out, whatever is left
            share = max(self.capacity // max(hosts, 1), 1)
            loaded, full = await self._read_pass(connection, stored, per_host, share)
            if not full:
                more, full = await self._read_pass(connection, stored, per_host, None)
                loaded += more
        # what the database still holds beyond memory
        self.spilled = max(self.spilled - loaded, 1) if full else 0
        if not full:
            self.spilled_hosts.clear()
        return loaded

    def _take_back(self, host: str) -> None:
        left = self.spilled_hosts.pop(host, 0) - 1
        if left > 0:
            self.spilled_hosts[host] = left

    async def _read_pass(
        self,
        connection: AsyncConnection,
        stored: set[int],
        per_host: Counter[str],
        share: int | None,
    ) -> tuple[int, bool]:
        """One scan of the queued URLs in order; (URLs loaded, whether memory is full)."""
        loaded, after = 0, None
        while True:
            batch = await storage.best_queued(
                connection, by_score=self.by_score, limit=REFILL_BATCH, after=after
            )
            for queued in batch:
                # new URLs may have filled memory while the database was read
                if len(self.policy) >= self.capacity:
                    return loaded, True
                if (
                    queued.id in self._in_memory
                    or queued.id in self._dispatched
                    or queued.id in stored
                    or (share is not None and per_host[queued.host] >= share)
                ):
                    continue
                per_host[queued.host] += 1
                self._take_back(queued.host)
                self._in_memory.add(queued.id)
                self.policy.push(
                    Candidate(queued.id, queued.url, queued.host, queued.depth, queued.score)
                )
                loaded += 1
            if len(batch) < REFILL_BATCH:
                return loaded, len(self.policy) >= self.capacity
            after = batch[-1]
