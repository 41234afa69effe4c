"""A daemon's share of a shared crawl on a real PostgreSQL server: hosts beyond its
share are handed to a daemon that joins, even while they are busy."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

import storage
from crawler.engine.leases import HostLeases
from storage import NewUrl
from storage.models import HostLease

HOSTS = ("a.test", "b.test", "c.test", "d.test")


def leases(db: AsyncEngine, name: str) -> HostLeases:
    return HostLeases(db=db, daemon_id=name, lease_seconds=60.0, cooldown=lambda host: 0.0)


async def test_busy_hosts_beyond_the_share_drain_and_go_to_a_daemon_that_joins(
    postgres_url: str,
) -> None:
    db = storage.open_engine(postgres_url)
    try:
        await storage.create_schema(db)
        async with db.begin() as connection:  # host a.test has the most URLs left
            urls = [NewUrl(f"http://{h}/{i}", h, 0, 0.5) for h in HOSTS for i in range(3)]
            urls += [NewUrl(f"http://a.test/more/{i}", "a.test", 1, 0.5) for i in range(5)]
            await storage.add_urls(connection, urls)
        first, second = leases(db, "first"), leases(db, "second")
        await first.join()
        await first.tick(busy=set(), pages=0, rate=0.0)
        assert set(first.expires) == set(HOSTS)  # alone: every host
        await second.join()
        # every host has a visit in flight: none may be given up yet, but the two
        # beyond the new share (those with the fewest URLs left) take no new visit
        await first.tick(busy=set(HOSTS), pages=0, rate=0.0)
        assert set(first.expires) == set(HOSTS)
        assert first.draining == {"b.test", "c.test"}
        assert [host for host in HOSTS if first.holds(host)] == ["a.test", "d.test"]
        # their visits over, the next tick gives them up, and the new daemon takes them
        await first.tick(busy={"a.test", "d.test"}, pages=0, rate=0.0)
        await second.tick(busy=set(), pages=0, rate=0.0)
    finally:
        await db.dispose()
    assert set(first.expires) == {"a.test", "d.test"}
    assert first.draining == set()
    assert set(second.expires) == {"b.test", "c.test"}


async def test_daemons_share_one_census_of_the_hosts_an_interval(postgres_url: str) -> None:
    """The census reads every queued URL: one daemon takes it, the others reuse it until
    an interval has passed, and hosts found meanwhile are claimed after the next."""
    clock = [1_000.0]

    def daemon(name: str) -> HostLeases:
        return HostLeases(
            db=db,
            daemon_id=name,
            lease_seconds=60.0,
            cooldown=lambda host: 0.0,
            wall_clock=lambda: clock[0],
        )

    async def registered() -> set[str]:
        async with db.connect() as connection:
            return set((await connection.execute(select(HostLease.host))).scalars())

    db = storage.open_engine(postgres_url)
    try:
        await storage.create_schema(db)
        async with db.begin() as connection:
            await storage.add_urls(connection, [NewUrl(f"http://{h}/", h, 0, 0.5) for h in HOSTS])
        first, second = daemon("first"), daemon("second")
        await first.join()
        await second.join()
        await first.tick(busy=set(), pages=0, rate=0.0)
        assert first.census == (4, 1_000.0)
        assert len(first.expires) == 2  # two daemons alive: a share of two hosts
        async with db.begin() as connection:
            await storage.add_urls(connection, [NewUrl("http://e.test/", "e.test", 0, 0.5)])
        clock[0] += 5  # within the interval (15 s): the first daemon's census holds
        await second.tick(busy=set(), pages=0, rate=0.0)
        assert second.census is None
        assert "e.test" not in await registered()
        assert len(second.expires) == 2
        assert not set(second.expires) & set(first.expires)
        clock[0] += 11  # past it: the second daemon takes the census, finds e.test
        await second.tick(busy=set(), pages=0, rate=0.0)
        assert second.census == (5, 1_016.0)
        assert "e.test" in await registered()
        assert "e.test" in second.expires  # its share is now three hosts
    finally:
        await db.dispose()
