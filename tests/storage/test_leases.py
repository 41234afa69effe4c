"""Host leases and daemons' heartbeats: several daemons sharing one crawl."""

from __future__ import annotations

import asyncio
import random

from sqlalchemy.ext.asyncio import AsyncEngine

import storage
from storage import DaemonRecord, NewUrl
from tests.storage.helpers import fetched


async def queue(engine: AsyncEngine, *hosts: str, per_host: int = 2) -> None:
    async with engine.begin() as connection:
        await storage.add_urls(
            connection,
            [NewUrl(f"http://{h}/{i}", h, 0, 0.5) for h in hosts for i in range(per_host)],
        )


async def claim(engine: AsyncEngine, owner: str, *, now: float, limit: int = 10) -> list[str]:
    """As a tick that takes the census claims: the hosts found since are registered."""
    async with engine.begin() as connection:
        await storage.register_hosts(connection)
        return await storage.claim_hosts(connection, owner, now=now, until=now + 30, limit=limit)


async def test_hosts_with_queued_urls_are_claimed_once_up_to_the_limit(
    engine: AsyncEngine,
) -> None:
    await queue(engine, "a", "b", "c")
    first = await claim(engine, "d1", now=100, limit=2)
    second = await claim(engine, "d2", now=100)
    third = await claim(engine, "d3", now=100)
    assert len(first) == 2
    assert sorted(first + second) == ["a", "b", "c"]
    assert third == []
    async with engine.connect() as connection:
        held = await storage.held_hosts(connection)
        mine = await storage.held_hosts(connection, "d1")
    assert held == {**dict.fromkeys(first, "d1"), **dict.fromkeys(second, "d2")}
    assert mine == dict.fromkeys(first, "d1")


async def test_a_host_without_queued_urls_is_not_claimed(engine: AsyncEngine) -> None:
    await queue(engine, "a")
    async with engine.begin() as connection:
        await storage.add_urls(connection, [NewUrl("http://b/", "b", 0, 0.5)])
        await storage.mark_reached(connection, [NewUrl("http://b/", "b", 0, 0.5)])
    assert await claim(engine, "d1", now=1) == ["a"]


async def test_an_expired_lease_is_taken_over_and_its_holder_loses_it(
    engine: AsyncEngine,
) -> None:
    await queue(engine, "a", "b")
    assert sorted(await claim(engine, "dead", now=100)) == ["a", "b"]
    assert await claim(engine, "d2", now=129) == []  # live until 130
    async with engine.begin() as connection:  # the other renews "b" only by chance: no
        assert sorted(await storage.renew_leases(connection, "dead", until=125)) == ["a", "b"]
    assert sorted(await claim(engine, "d2", now=126)) == ["a", "b"]
    async with engine.begin() as connection:
        assert await storage.renew_leases(connection, "dead", until=200) == []
        assert sorted(await storage.renew_leases(connection, "d2", until=200)) == ["a", "b"]


async def test_a_released_host_is_free_after_its_delay(engine: AsyncEngine) -> None:
    await queue(engine, "a", "b")
    await claim(engine, "d1", now=100)
    async with engine.begin() as connection:
        await storage.release_hosts(connection, "d1", {"a": 101.0})
        await storage.release_hosts(connection, "other", {"b": 0.0})  # not its lease
        assert await storage.renew_leases(connection, "d1", until=140) == ["b"]
    assert await claim(engine, "d2", now=100.5) == []
    assert await claim(engine, "d2", now=101.5) == ["a"]
    async with engine.begin() as connection:
        await storage.release_all(connection, "d1", free_from=0.0)
        assert await storage.held_hosts(connection, "d1") == {}
    assert await claim(engine, "d3", now=102) == ["b"]


async def test_a_daemon_reads_back_only_the_urls_of_the_hosts_it_holds(
    engine: AsyncEngine,
) -> None:
    await queue(engine, "a", "b", "c", per_host=3)
    await claim(engine, "d1", now=1, limit=2)
    async with engine.connect() as connection:
        held = set(await storage.held_hosts(connection, "d1"))
        by_score = [
            queued
            async for batch in storage.queued_by_share(
                connection, by_score=True, share=100, batch_size=100, owner="d1"
            )
            for queued in batch
        ]
        ranked = await storage.queued_with_parents(connection, limit=100, owner="d1")
        counts = await storage.count_queued_by_host(connection, "d1")
        hosts = await storage.count_queued_hosts(connection, "d1")
        everyone = await storage.count_queued_hosts(connection)
        anything = await storage.any_queued(connection)
    assert len(held) == 2
    assert {q.host for q in by_score} == {q.host for q in ranked} == held
    assert len(by_score) == len(ranked) == 6
    assert counts == dict.fromkeys(held, 3)
    assert (hosts, everyone, anything) == (2, 3, True)


async def test_only_registered_hosts_are_claimed_and_each_is_registered_once(
    engine: AsyncEngine,
) -> None:
    await queue(engine, "a", "b")
    async with engine.begin() as connection:
        assert await storage.claim_hosts(connection, "d1", now=1, until=30, limit=5) == []
        assert await storage.register_hosts(connection) == 2
        assert await storage.register_hosts(connection) == 0
    await queue(engine, "c")  # found after the census: claimed after the next
    async with engine.begin() as connection:
        assert sorted(await storage.claim_hosts(connection, "d1", now=1, until=30, limit=5)) == [
            "a",
            "b",
        ]
        assert await storage.register_hosts(connection) == 1
        assert await storage.claim_hosts(connection, "d2", now=1, until=30, limit=5) == ["c"]


async def test_a_census_is_read_back_while_it_is_recent(engine: AsyncEngine) -> None:
    async with engine.begin() as connection:
        await storage.save_daemon(
            connection, DaemonRecord("a", 0.0, 10.0, queued_hosts=7, counted_at=10.0)
        )
        await storage.save_daemon(
            connection, DaemonRecord("b", 0.0, 20.0, queued_hosts=9, counted_at=20.0)
        )
        await storage.save_daemon(connection, DaemonRecord("c", 0.0, 30.0))  # took none
    async with engine.connect() as connection:
        assert await storage.latest_census(connection, since=5.0) == 9  # the latest
        assert await storage.latest_census(connection, since=20.0) == 9
        assert await storage.latest_census(connection, since=21.0) is None  # too old


async def test_daemons_heartbeats_are_kept_and_the_live_ones_counted(
    engine: AsyncEngine,
) -> None:
    async with engine.begin() as connection:
        await storage.save_daemon(connection, DaemonRecord("a", 0.0, 10.0, pages=3))
        await storage.save_daemon(connection, DaemonRecord("b", 0.0, 50.0, hosts_held=2))
        await storage.save_daemon(connection, DaemonRecord("a", 0.0, 60.0, pages=9))
        await storage.save_daemon(connection, DaemonRecord("c", 0.0, 55.0, stopped_at=55.0))
    async with engine.connect() as connection:
        daemons = await storage.load_daemons(connection)
        live = await storage.live_daemons(connection, since=40.0)
    assert [(d.id, d.pages, d.hosts_held) for d in daemons] == [
        ("a", 9, 0),
        ("c", 0, 0),
        ("b", 0, 2),
    ]
    assert live == 2


async def test_daemons_claiming_at_once_never_share_a_host(db_url: str) -> None:
    engines = [storage.open_engine(db_url) for _ in range(6)]
    try:
        await storage.create_schema(engines[0])
        await queue(engines[0], *(f"h{i}" for i in range(40)))
        rounds = await asyncio.gather(
            *(
                claim(engine, f"d{n}", now=1, limit=4)
                for _ in range(3)
                for n, engine in enumerate(engines)
            )
        )
        async with engines[0].connect() as connection:
            held = await storage.held_hosts(connection)
    finally:
        for engine in engines:
            await engine.dispose()
    claimed = [host for hosts in rounds for host in hosts]
    assert len(claimed) == len(set(claimed))  # none claimed twice
    assert set(claimed) == set(held)


async def test_writers_of_overlapping_links_at_once_do_not_deadlock(db_url: str) -> None:
    """Two daemons' batches often link to the same URLs, in different orders."""
    engines = [storage.open_engine(db_url) for _ in range(4)]
    rng = random.Random(3)
    urls = [NewUrl(f"http://h{i % 7}/{i}", f"h{i % 7}", 1, 0.1) for i in range(300)]

    async def write(engine: AsyncEngine) -> int:
        added = 0
        for _ in range(10):
            batch = rng.sample(urls, 200)
            async with engine.begin() as connection:
                added += len(await storage.add_urls(connection, batch))
        return added

    try:
        await storage.create_schema(engines[0])
        added = await asyncio.gather(*(write(engine) for engine in engines))
        async with engines[0].connect() as connection:
            known = await storage.count_queued_by_host(connection)
    finally:
        for engine in engines:
            await engine.dispose()
    assert sum(added) == sum(known.values())  # each URL new to one writer only


async def test_the_census_counts_and_registers_each_host_with_queued_urls_once(
    engine: AsyncEngine,
) -> None:
    """However many URLs each has queued; a host whose URLs are all fetched is not
    counted, and a host found later is registered at the next census."""
    await queue(engine, "a.test", "c.test", per_host=1)
    await queue(engine, "b.test", "d.test", per_host=40)
    async with engine.begin() as connection:  # d.test's URLs all fetched
        queued = await storage.queued_with_parents(connection, limit=200)
        await storage.record_fetches(
            connection, [fetched(q.id) for q in queued if q.host == "d.test"]
        )
    async with engine.begin() as connection:
        assert await storage.count_queued_hosts(connection) == 3
        assert await storage.register_hosts(connection) == 3
        assert await storage.register_hosts(connection) == 0
        claimed = await storage.claim_hosts(connection, "d1", now=1, until=30, limit=9)
        assert sorted(claimed) == ["a.test", "b.test", "c.test"]
    async with engine.begin() as connection:
        await storage.add_urls(connection, [NewUrl("http://0.test/", "0.test", 0, 0.5)])
        assert await storage.count_queued_hosts(connection) == 4
        assert await storage.register_hosts(connection) == 1


async def test_a_host_at_its_budget_of_pages_is_no_work_though_its_urls_stay_queued(
    engine: AsyncEngine,
) -> None:
    """A shared crawl with --max-pages-per-host ends when only such hosts have URLs."""
    async with engine.begin() as connection:
        added = await storage.add_urls(
            connection,
            [NewUrl(f"http://{h}/{i}", h, 0, 0.5) for h in ("full", "open") for i in range(3)],
        )
        ids = {q.url: q.id for q in added}
        pages = [fetched(ids["http://full/0"]), fetched(ids["http://full/1"])]
        redirect = fetched(ids["http://open/0"], status=301)
        await storage.record_fetches(connection, [*pages, redirect])
    async with engine.connect() as connection:
        anything = await storage.any_queued(connection)
        below_two = await storage.any_queued(connection, pages_per_host=2, not_counted=(301,))
        below_three = await storage.any_queued(connection, pages_per_host=3, not_counted=(301,))
    assert (anything, below_two, below_three) == (True, True, True)  # "open" has no page
    async with engine.begin() as connection:
        await storage.record_fetches(
            connection, [fetched(ids["http://open/1"]), fetched(ids["http://open/2"])]
        )
    async with engine.connect() as connection:
        assert await storage.any_queued(connection)  # "full/2" is queued still
        assert not await storage.any_queued(connection, pages_per_host=2, not_counted=(301,))
        assert await storage.any_queued(connection, pages_per_host=3, not_counted=(301,))
