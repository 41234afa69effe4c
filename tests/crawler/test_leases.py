"""A daemon's share of a shared crawl on a real PostgreSQL server: hosts beyond its
share are handed to a daemon that joins, even while they are busy."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncEngine

import storage
from crawler.engine.leases import HostLeases
from storage import NewUrl

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
