"""A crawl on PostgreSQL rides out its database going away for a while: a real server,
stopped mid-crawl and started again."""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections import Counter
from collections.abc import Iterator

import pytest
from aiohttp import ClientError, ClientSession, ClientTimeout, web
from prometheus_client import CollectorRegistry
from sqlalchemy import text

import storage
from crawler.engine.leases import HostLeases
from crawler.telemetry.healthcheck import check_health
from crawler.telemetry.metrics_server import MetricsServer
from testbed.demo import free_port
from testbed.server import ServerSpec, Testbed
from testbed.web import WebSpec
from tests.crawler.helpers import SEEN, collection, crawl, links, reachable, site
from tests.crawler.helpers import serving as serving_site
from tests.crawler.test_cluster import daemon, scalar
from tests.postgres import PostgresServer, running_server

PAGES = 60
LEASE_SECONDS = 2.0  # renewed every half second; no dispatch with less than a second left


@pytest.fixture
def own_postgres() -> Iterator[PostgresServer]:
    """A server of the test's own, to stop and start (the session's is shared)."""
    with running_server() as server:
        yield server


def chain(pages: int, *, latency: float) -> web.Application:
    """Pages /0 ... /N-1, each linking to the next, each answered after `latency`."""

    def page(index: int):  # type: ignore[no-untyped-def]
        body = links(*([f"/{index + 1}"] if index + 1 < pages else []))

        async def handler(_request: web.Request) -> web.Response:
            await asyncio.sleep(latency)
            return web.Response(text=body, content_type="text/html")

        return handler

    return site({f"/{index}": page(index) for index in range(pages)})


async def wait_for(condition, what: str, *, seconds: float = 30.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"{what} did not happen in {seconds} s"
        await asyncio.sleep(0.02)


async def health(client: ClientSession, port: int) -> tuple[int, str]:
    """/healthz's status and body; (0, why) while it cannot be asked."""
    try:
        async with client.get(f"http://127.0.0.1:{port}/healthz") as response:
            return response.status, await response.text()
    except (ClientError, TimeoutError) as error:
        return 0, repr(error)


async def rows(db_url: str, sql: str) -> list[tuple[object, ...]]:
    engine = storage.open_engine(db_url)
    try:
        async with engine.connect() as connection:
            return [tuple(row) for row in (await connection.execute(text(sql))).all()]
    finally:
        await engine.dispose()


@pytest.mark.slow
async def test_a_crawl_rides_out_a_database_restart_and_stores_every_page_once(
    own_postgres: PostgresServer,
) -> None:
    db_url = own_postgres.new_database()
    port = free_port()
    app = chain(PAGES, latency=0.05)
    seen = app[SEEN]
    async with serving_site(app) as base, ClientSession(timeout=ClientTimeout(total=2)) as client:
        crawling = asyncio.create_task(
            crawl(
                db_url,
                [base + "0"],
                metrics_host="127.0.0.1",
                metrics_port=port,
                lease_seconds=LEASE_SECONDS,
            )
        )
        await wait_for(lambda: len(seen.requests) >= 10 or crawling.done(), "ten requests")
        assert not crawling.done()
        stopped_at = time.monotonic()
        own_postgres.stop()
        # away for longer than a lease: the daemon must not take it as still its own
        answers = []
        while time.monotonic() < stopped_at + 2.5 * LEASE_SECONDS:
            answers.append(await health(client, port))
            await asyncio.sleep(0.1)
        restarted_at = time.monotonic()
        own_postgres.start()
        assert not crawling.done(), crawling.exception() if crawling.done() else None
        healthy_again = False
        while not crawling.done():
            status, _ = await health(client, port)
            healthy_again = healthy_again or status == 200
            await asyncio.sleep(0.05)
        summary = await crawling
    assert summary.stop_reason == "frontier exhausted"
    # /healthz said the database was away while it was, and well once it came back
    degraded = [body for status, body in answers if status == 503]
    assert degraded, answers
    assert all("database" in body for body in degraded)
    assert healthy_again
    # no request while the lease could have lapsed: the host may be another daemon's
    assert [
        path
        for path, arrived, _ in seen.requests
        if stopped_at + LEASE_SECONDS < arrived < restarted_at
    ] == []
    # every page asked once, stored once
    asked = Counter(seen.paths())
    assert {path: times for path, times in asked.items() if times > 1} == {}
    assert sorted(asked) == sorted(["/robots.txt", *(f"/{i}" for i in range(PAGES))])
    stored = await rows(db_url, "SELECT url, state, fetch_count FROM urls")
    assert len(stored) == PAGES
    assert {(state, fetch_count) for _, state, fetch_count in stored} == {(1, 1)}


@pytest.mark.slow
async def test_two_daemons_ride_out_a_restart_and_never_ask_for_a_page_twice(
    own_postgres: PostgresServer,
) -> None:
    db_url = own_postgres.new_database()
    spec = WebSpec(pages=300, hosts=4, seed=5, redirect_fraction=0.0)
    async with Testbed(spec, ServerSpec(latency=0.01)) as bed:
        daemons = [
            await asyncio.create_subprocess_exec(
                *daemon(bed, db_url, name, "--delay", "0.05"),
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
            for name in ("d0", "d1")
        ]
        deadline = time.monotonic() + 60
        while await scalar(db_url, "SELECT count(*) FROM urls WHERE state = 1") < 60:
            assert time.monotonic() < deadline, "too few pages stored in time"
            await asyncio.sleep(0.05)
        own_postgres.stop()
        await asyncio.sleep(2.5 * LEASE_SECONDS)  # longer than the leases
        own_postgres.start()
        for process in daemons:
            _, err = await asyncio.wait_for(process.communicate(), 120)
            assert process.returncode == 0, err.decode()[-2000:]
            assert "is away" in err.decode()
        requests = list(bed.requests)
    pages = Counter((r.host, r.path) for r in requests if r.path.startswith("/p/"))
    assert {page: times for page, times in pages.items() if times > 1} == {}
    exported = await collection(db_url)
    assert {bed.page_url(page) for page in reachable(bed)} <= set(exported)
    assert all(record.fetch_count == 1 for record in exported.values())
    # politeness across daemons held through the restart: one request at a time a host
    by_host = sorted(requests, key=lambda r: (r.host, r.started))
    for host, served in itertools.groupby(by_host, key=lambda r: r.host):
        for before, after in itertools.pairwise(list(served)):
            assert after.started >= before.finished - 0.005, f"host {host} asked twice at once"


async def test_after_a_restart_a_daemon_takes_over_no_host_before_its_holder_renews(
    own_postgres: PostgresServer,
) -> None:
    """The holder's leases ran out while the database was away, its last pages not yet
    stored: the other daemon, back first, must not take its hosts (and fetch those
    pages again) before the holder has had a tick and a longest retry pause to renew."""
    wall = [1_000.0]  # both daemons' wall clock
    back = [0.0]  # the second daemon's retry clock
    hosts = ("a.test", "b.test", "c.test", "d.test")
    db = storage.open_engine(own_postgres.new_database())
    try:
        await storage.create_schema(db)
        async with db.begin() as connection:
            await storage.add_urls(
                connection, [storage.NewUrl(f"http://{h}/", h, 0, 0.5) for h in hosts]
            )

        def daemon(name: str, retry: storage.DatabaseRetry) -> HostLeases:
            return HostLeases(
                db=db,
                daemon_id=name,
                lease_seconds=60.0,
                cooldown=lambda h: 0.0,
                wall_clock=lambda: wall[0],
                retry=retry,
            )

        holder = daemon("holder", storage.DatabaseRetry(db, patience=60.0))
        retry = storage.DatabaseRetry(db, patience=60.0, clock=lambda: back[0])
        other = daemon("other", retry)
        await holder.join()
        await holder.tick(busy=set(), pages=0, rate=0.0)
        await other.join()
        assert set(holder.expires) == set(hosts)
        own_postgres.stop()
        wall[0] += 90  # away longer than the leases
        ticking = asyncio.create_task(other.tick(busy=set(), pages=0, rate=0.0))
        await asyncio.sleep(0.5)  # the other daemon finds the database away
        own_postgres.start()
        await asyncio.wait_for(ticking, 30)
        await db.dispose()  # the holder's connections died with the server
        assert set(other.expires) == set()  # every lease has run out, none taken
        # its visits of before the restart not yet stored: every host is busy
        await holder.tick(busy=set(hosts), pages=0, rate=0.0)
        assert set(holder.expires) == set(hosts)  # renewed: they never changed hands
        back[0] += 60.0 + 2 * storage.LONGEST_PAUSE  # settled: the share is taken again
        await holder.tick(busy=set(), pages=0, rate=0.0)  # stored: gives up its excess
        wall[0] += 1
        await other.tick(busy=set(), pages=0, rate=0.0)
        assert len(other.expires) == 2
    finally:
        await db.dispose()


async def test_a_database_away_longer_than_db_outage_seconds_stops_the_crawl_naming_it(
    own_postgres: PostgresServer,
) -> None:
    db_url = own_postgres.new_database()
    app = chain(PAGES, latency=0.05)
    seen = app[SEEN]
    async with serving_site(app) as base:
        crawling = asyncio.create_task(crawl(db_url, [base + "0"], db_outage_seconds=1.0))
        await wait_for(lambda: len(seen.requests) >= 5 or crawling.done(), "five requests")
        own_postgres.stop()
        with pytest.raises(storage.StorageError) as raised:
            await asyncio.wait_for(crawling, 60)
    message = str(raised.value)
    assert "\n" not in message  # one line
    assert db_url.split("?")[0] in message
    assert "db_outage_seconds" in message


async def test_healthz_answers_503_saying_what_is_wrong_and_the_healthcheck_repeats_it() -> None:
    port = free_port()
    degraded = {"status": "degraded", "database": "postgresql://db away for 3 s: refused"}
    server = MetricsServer(
        CollectorRegistry(), host="127.0.0.1", port=port, health=lambda: degraded
    )
    await server.start()
    try:
        async with ClientSession(timeout=ClientTimeout(total=5)) as client:
            assert await health(client, port) == (503, json.dumps(degraded))
        problem = await asyncio.to_thread(
            check_health, f"http://127.0.0.1:{port}/healthz", timeout=5
        )
    finally:
        await server.stop()
    assert problem is not None
    assert "503" in problem
    assert "postgresql://db away for 3 s" in problem
