"""Per-host state in memory for a working set of hosts; the rest waits in the database.

A broad crawl meets millions of hosts, and each has a politeness slot and a robots.txt
entry (up to 500 KiB, and its parsed rules). Memory holds about `capacity` hosts: past
that, the least recently used idle hosts are dropped. Idle means all of:

- no request to the host in flight and no visit waiting for its turn;
- its not_before has passed: no delay is owed;
- the database holds its state: a checkpoint saved it, that transaction has committed,
  and nothing has changed since.

Busy hosts are never dropped, so memory exceeds `capacity` while more hosts than that
are busy: among them, every host changed since the last checkpoint whose write has
committed (checkpoints come every few seconds).

Because only hosts that owe no delay are dropped, a host not in memory is ready: the
dispatcher's `politeness.ready` stays synchronous and exact, with no database read. A
visit reads its host back (robots.txt, Crawl-delay, backoff, failures, its sitemaps'
plan) when it reaches the host, holding the host's slot, before robots.txt is consulted
(`ensure`): robots.txt is fetched again only if the database has none still fresh. At
start only the hosts still closed (not_before in the future) are read, and the names of
all into a Bloom filter of fixed size (`crawler.fetch.bloom`), which every save adds to: a
visit to a host the database cannot hold, as a new host's first, reads nothing.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable, Sequence

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

import storage
from crawler.fetch.bloom import BloomFilter
from crawler.fetch.politeness import Politeness
from crawler.fetch.robots import RobotsCache
from crawler.fetch.sitemaps import Sitemaps


class HostMemory:
    def __init__(
        self,
        *,
        db: AsyncEngine,
        politeness: Politeness,
        robots: RobotsCache,
        capacity: int,
        sitemaps: Sitemaps | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
        on_read_back: Callable[[], None] = lambda: None,
        retry: storage.DatabaseRetry | None = None,
    ) -> None:
        self.db = db
        self.retry = retry or storage.DatabaseRetry(db, patience=0.0)  # the database away
        self.politeness = politeness
        self.robots = robots
        self.sitemaps = sitemaps or Sitemaps.off()  # which of its sitemaps a host has read
        self.capacity = capacity
        self.clock = clock
        self.wall_clock = wall_clock
        self.on_read_back = on_read_back  # a visit read its host back from the database
        self._recent: OrderedDict[str, None] = OrderedDict()  # in memory, oldest use first
        self._dirty: set[str] = set()  # changed since the last checkpoint took them
        self._saved_in: dict[str, int] = {}  # the writer's ticket of a host's last save
        self._saved = BloomFilter()  # the hosts the database may hold

    def __len__(self) -> int:
        return len(self._recent)

    def __contains__(self, host: object) -> bool:
        return host in self._recent

    async def restore(self, connection: AsyncConnection) -> None:
        """Read back the hosts still closed (a host not in memory must be ready), and
        note which hosts the database holds."""
        for record in await storage.load_hosts(connection, closed_after=self.wall_clock()):
            self._recent[record.host] = None
            self._apply(record)
        async for names in storage.iter_host_names(connection):
            for name in names:
                self._saved.add(name)

    async def ensure(self, host: str) -> None:
        """Bring `host`'s state back from the database unless memory holds it; called
        holding the host's slot, so that it cannot be dropped meanwhile."""
        if host in self._recent or host not in self._saved:
            self._recent[host] = None
            self._recent.move_to_end(host)
            return
        try:
            record = await self.retry.run(lambda: self._load(host), doing="read from")
        except SQLAlchemyError as error:
            raise storage.StorageError(f"cannot read the database: {error}") from error
        if host in self._recent:  # another visit to the host read it meanwhile
            return
        self._recent[host] = None
        if record is not None:
            self.on_read_back()
            self._apply(record)

    async def _load(self, host: str) -> storage.HostRecord | None:
        async with self.db.connect() as connection:
            return await storage.load_host(connection, host)

    def changed(self, host: str) -> None:
        """`host`'s state changed: the next checkpoint saves it."""
        self._dirty.add(host)
        self._recent[host] = None
        self._recent.move_to_end(host)

    def take_dirty(self) -> list[storage.HostRecord]:
        """The records of the hosts changed since the last call, for a checkpoint; they
        stay in memory at least until `saving` is told the write committed."""
        names = sorted(self._dirty)
        self._dirty.clear()
        return self.records(names)

    def records(self, names: Iterable[str]) -> list[storage.HostRecord]:
        """What the database keeps of these hosts, as they are in memory now."""
        now_wall, now = self.wall_clock(), self.clock()
        records = []
        for name in names:
            slot = self.politeness.slot(name)
            entry = self.robots.get(name, now_wall)
            records.append(
                storage.HostRecord(
                    host=name,
                    robots_status=None if entry is None else entry.status,
                    robots_body=None if entry is None else entry.body,
                    robots_fetched_at=None if entry is None else entry.fetched_at,
                    backoff=slot.backoff,
                    failures=slot.failures,
                    not_before=now_wall + max(0.0, slot.not_before - now),
                    sitemaps=self.sitemaps.saved(name),
                )
            )
        return records

    def saving(self, hosts: Sequence[storage.HostRecord], ticket: int) -> None:
        """`hosts` are written with the writer's item `ticket`."""
        for record in hosts:
            self._saved_in[record.host] = ticket
            self._saved.add(record.host)

    def evict(self, *, saved_through: int, waiting: Collection[str] = ()) -> int:
        """Drop idle hosts, least recently used first, down to `capacity` if there are
        enough of them; `saved_through`: the writer's tickets committed so far; `waiting`:
        hosts that visits wait for. How many were dropped."""
        excess = len(self._recent) - self.capacity
        if excess <= 0:
            return 0
        now = self.clock()
        dropped = 0
        for host in list(self._recent):
            if dropped == excess:
                break
            if (
                host in self._dirty
                or host in waiting
                or self._saved_in.get(host, 0) > saved_through
                or not self.politeness.idle(host, now)
            ):
                continue
            del self._recent[host]
            self._saved_in.pop(host, None)
            self.politeness.forget(host)
            self.robots.forget(host)
            self.sitemaps.forget(host)
            dropped += 1
        return dropped

    def _apply(self, record: storage.HostRecord) -> None:
        host = record.host
        if record.robots_fetched_at is not None:
            entry = self.robots.store(
                host, record.robots_status, record.robots_body, record.robots_fetched_at
            )
            self.politeness.set_crawl_delay(host, self.robots.crawl_delay(entry))
        self.sitemaps.restore(host, record.sitemaps)
        slot = self.politeness.slot(host)
        slot.backoff, slot.failures = record.backoff, record.failures
        now_wall, now = self.wall_clock(), self.clock()
        if record.not_before > now_wall:
            slot.not_before = max(slot.not_before, now + (record.not_before - now_wall))
