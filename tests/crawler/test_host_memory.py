"""Per-host state: a bounded working set in memory, the rest read back from SQLite."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from aiohttp import web
from prometheus_client import CollectorRegistry
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

import storage
from crawler.engine import checkpoints
from crawler.fetch.host_memory import HostMemory
from crawler.fetch.politeness import Feedback, Politeness
from crawler.fetch.robots import RobotsCache, Verdict
from crawler.store.records import StateWrite
from crawler.store.writer import StorageWriter
from tests.crawler.helpers import SEEN, Handler, collection, crawl, html, links, serve, site

WALL = 1_700_000_000.0  # the wall clock at monotonic 0
SLOW_ROBOTS = "User-agent: *\nDisallow: /private\nCrawl-delay: 7\n"


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now

    def wall(self) -> float:
        return WALL + self.now


@pytest.fixture
async def db(db_url: str) -> AsyncIterator[AsyncEngine]:
    engine = storage.open_engine(db_url)
    await storage.create_schema(engine)
    yield engine
    await engine.dispose()


class Hosts:
    """A host memory over real politeness, robots.txt cache and SQLite, driven the way
    the visitor and the engine drive it."""

    def __init__(self, db: AsyncEngine, capacity: int) -> None:
        self.clock = Clock()
        self.polite = Politeness(delay=1.0)
        self.robots = RobotsCache(user_agent="testbot", ttl=86_400.0, retry=600.0)
        self.read_back = 0
        self.memory = HostMemory(
            db=db,
            politeness=self.polite,
            robots=self.robots,
            capacity=capacity,
            clock=self.clock,
            wall_clock=self.clock.wall,
            on_read_back=self._counted,
        )
        self.writer = StorageWriter(db, on_committed=lambda committed: None)

    def _counted(self) -> None:
        self.read_back += 1

    async def visit(self, host: str, robots: str = "", feedback: Feedback = Feedback.SUCCESS):
        now = self.clock.now
        self.polite.start(host, now)
        await self.memory.ensure(host)
        if self.robots.get(host, self.clock.wall()) is None:
            entry = self.robots.store(host, 200, robots, self.clock.wall())
            self.polite.set_crawl_delay(host, self.robots.crawl_delay(entry))
        self.polite.finish(host, now, feedback)
        self.memory.changed(host)

    async def checkpoint(self) -> None:
        """Save the changed hosts, wait for the commit, drop idle hosts."""
        hosts = self.memory.take_dirty()
        self.memory.saving(hosts, self.writer.put(StateWrite(hosts=hosts)))
        await self.writer.drained()
        self.memory.evict(saved_through=self.writer.committed)


@pytest.fixture
async def hosts(db: AsyncEngine) -> AsyncIterator[Hosts]:
    hosts = Hosts(db, capacity=10)
    writing = asyncio.create_task(hosts.writer.run())
    yield hosts
    hosts.writer.close()
    await writing


async def test_memory_holds_its_bound_of_hosts_and_reads_dropped_ones_back(
    hosts: Hosts, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: list[str] = []
    load_host = storage.load_host

    async def counted_load(connection: AsyncConnection, host: str) -> storage.HostRecord | None:
        reads.append(host)
        return await load_host(connection, host)

    monkeypatch.setattr(storage, "load_host", counted_load)
    await hosts.visit("h0", SLOW_ROBOTS, Feedback.THROTTLED)
    hosts.clock.now += 100.0
    await hosts.visit("h0", feedback=Feedback.THROTTLED)  # backoff 4
    for i in range(1, 200):
        hosts.clock.now += 100.0  # every delay owed is over
        await hosts.visit(f"h{i}")
        if i % 20 == 0:
            await hosts.checkpoint()
    await hosts.checkpoint()
    assert len(hosts.memory) <= 10
    assert len(hosts.polite) <= 10
    assert len(hosts.robots) <= 10
    assert "h0" not in hosts.memory
    assert reads == []  # new hosts: the database cannot hold them

    # dropped, h0 is ready; its visit reads back its robots.txt, Crawl-delay and backoff
    now, wall = hosts.clock.now, hosts.clock.wall()
    assert hosts.polite.ready("h0", now)
    hosts.polite.start("h0", now)
    await hosts.memory.ensure("h0")
    assert reads == ["h0"]
    assert hosts.read_back == 1
    entry = hosts.robots.get("h0", wall)
    assert entry is not None
    assert entry.body == SLOW_ROBOTS
    assert hosts.robots.verdict(entry, "http://h0/private") is Verdict.DISALLOW
    assert hosts.polite.slot("h0").backoff == 4.0
    hosts.polite.finish("h0", now)
    assert hosts.polite.ready_at("h0") == pytest.approx(now + 7.0 * 2.0)  # backoff halved


async def test_only_idle_hosts_whose_state_is_saved_leave_memory(db: AsyncEngine) -> None:
    hosts = Hosts(db, capacity=1)
    memory = hosts.memory
    names = ("old", "flight", "closed", "dirty", "unsaved", "waiting", "idle")
    for name in names:
        await hosts.visit(name)
    hosts.clock.now += 10.0
    memory.saving(memory.take_dirty(), 1)
    now = hosts.clock.now
    hosts.polite.defer("closed", now, now + 100.0)
    memory.changed("closed")
    memory.saving(memory.take_dirty(), 2)
    memory.changed("unsaved")
    memory.saving(memory.take_dirty(), 3)  # not yet committed
    hosts.polite.start("flight", now)
    memory.changed("dirty")

    assert memory.evict(saved_through=2, waiting={"waiting"}) == 2
    assert {name for name in names if name in memory} == {
        "flight",
        "closed",
        "dirty",
        "unsaved",
        "waiting",
    }
    assert len(hosts.polite) == 5

    # once all of them are idle and saved, memory holds its bound
    hosts.polite.release("flight")
    hosts.clock.now += 200.0
    memory.saving(memory.take_dirty(), 4)
    assert memory.evict(saved_through=4) == 4
    assert len(memory) == len(hosts.polite) == 1


async def test_a_restart_reads_back_only_the_hosts_still_closed(db: AsyncEngine) -> None:
    hosts = Hosts(db, capacity=10)
    wall = hosts.clock.wall()
    records = [
        storage.HostRecord(f"h{i}", 200, SLOW_ROBOTS, wall - 60.0, not_before=wall - 1.0)
        for i in range(500)
    ]
    closed = storage.HostRecord("closed", backoff=8.0, not_before=wall + 60.0)
    async with db.begin() as connection:
        await storage.save_hosts(connection, [*records, closed])
    async with db.connect() as connection:
        await hosts.memory.restore(connection)
    now = hosts.clock.now
    assert len(hosts.memory) == len(hosts.polite) == 1
    assert len(hosts.robots) == 0
    assert not hosts.polite.ready("closed", now)
    assert hosts.polite.ready_at("closed") == pytest.approx(now + 60.0)

    # any other host is ready, and read back when visited: no robots.txt fetched again
    assert hosts.polite.ready("h7", now)
    hosts.polite.start("h7", now)
    await hosts.memory.ensure("h7")
    assert hosts.read_back == 1
    assert hosts.robots.get("h7", wall) is not None
    assert hosts.polite.slot("h7").crawl_delay == 7.0


CHAIN = 16  # hosts, each a server of its own on loopback
CRAWL_DELAY = 0.3


async def test_a_crawl_of_more_hosts_than_memory_holds_reads_dropped_hosts_back(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A chain through 16 hosts with memory for 3 comes back to the first: its
    robots.txt is not fetched again and its Crawl-delay still holds."""
    monkeypatch.setattr(checkpoints, "GAUGE_INTERVAL", 0.05)
    monkeypatch.setattr(checkpoints, "CHECKPOINT_INTERVAL", 0.1)
    bases: list[str] = []

    def hop(i: int) -> Handler:
        async def handler(_request: web.Request) -> web.Response:
            await asyncio.sleep(0.05)  # time for checkpoints while the chain goes on
            target = bases[0] + "late" if i == CHAIN - 1 else bases[i + 1]
            return web.Response(text=links(target), content_type="text/html")

        return handler

    first_routes = {"/late": html(links("/late2")), "/late2": html(links())}
    apps = [
        site(
            {"/": hop(i), **(first_routes if i == 0 else {})},
            robots=f"User-agent: *\nCrawl-delay: {CRAWL_DELAY if i == 0 else 0}\n",
        )
        for i in range(CHAIN)
    ]
    servers = [await serve(app) for app in apps]
    bases.extend(str(server.make_url("/")) for server in servers)
    registry = CollectorRegistry()
    try:
        summary = await crawl(
            db_url, [bases[0]], registry=registry, host_memory=3, delay=0.05, concurrency=4
        )
    finally:
        for server in servers:
            await server.close()
    assert summary.stop_reason == "frontier exhausted"
    pages = await collection(db_url)
    assert len(pages) == CHAIN + 2
    assert all(page.error is None and page.fetch_count == 1 for page in pages.values())
    assert registry.get_sample_value("crawler_hosts_read_back_total") == 1  # the first host
    first = apps[0][SEEN]
    assert first.paths() == ["/robots.txt", "/", "/late", "/late2"]
    assert min(first.gaps()) >= CRAWL_DELAY
