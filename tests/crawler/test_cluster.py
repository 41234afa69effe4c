"""Several crawler daemons sharing one crawl through a real PostgreSQL server."""

from __future__ import annotations

import asyncio
import itertools
import random
import signal
import time
from collections import Counter

import pytest
from sqlalchemy import text

import storage
from testbed.server import ServerSpec, Testbed
from testbed.web import WebSpec
from tests.crawler.helpers import collection, reachable
from tests.crawler.test_process import run_args

LEASE_SECONDS = "2"


async def scalar(db_url: str, sql: str) -> int:
    engine = storage.open_engine(db_url)
    try:
        async with engine.connect() as connection:
            return int((await connection.execute(text(sql))).scalar() or 0)
    except Exception:  # the schema is not there yet
        return 0
    finally:
        await engine.dispose()


async def stored_urls(db_url: str) -> set[str]:
    engine = storage.open_engine(db_url)
    try:
        async with engine.connect() as connection:
            result = await connection.execute(text("SELECT url FROM urls WHERE state = 1"))
            return set(result.scalars())
    finally:
        await engine.dispose()


def daemon(bed: Testbed, db_url: str, name: str, *extra: str) -> list[str]:
    return run_args(
        bed,
        db_url,
        "--daemon-id",
        name,
        "--lease-seconds",
        LEASE_SECONDS,
        "--concurrency",
        "4",
        "--frontier-memory",
        "60",
        *extra,
    )


@pytest.mark.slow
@pytest.mark.parametrize("seed", [5, 23])
async def test_daemons_share_a_crawl_and_one_killed_loses_nothing_and_repeats_nothing(
    postgres_url: str, seed: int
) -> None:
    db_url = postgres_url
    rng = random.Random(seed)
    # no redirects, so that each page the server serves is one URL of the crawl's
    spec = WebSpec(pages=600, hosts=6, seed=seed, redirect_fraction=0.0)
    async with Testbed(spec, ServerSpec(latency=0.01)) as bed:
        # the first creates the schema and stores the seeds; the others join it
        names = ["d0", "d1", "d2"]
        processes = {
            name: await asyncio.create_subprocess_exec(
                *daemon(bed, db_url, name, "--delay", "0.05"),
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
            for name in names
        }
        # a kill at a random moment mid-crawl, of a daemon holding hosts
        kill_after = rng.randrange(60, 200)
        deadline = time.monotonic() + 60
        while await scalar(db_url, "SELECT count(*) FROM urls WHERE state = 1") < kill_after:
            assert time.monotonic() < deadline, "too few pages stored in time"
            await asyncio.sleep(0.02)
        holders = await scalar(
            db_url, "SELECT count(DISTINCT owner) FROM host_leases WHERE owner IS NOT NULL"
        )
        victim = rng.choice(names)
        while (
            await scalar(db_url, f"SELECT count(*) FROM host_leases WHERE owner = '{victim}'") == 0
        ):
            assert time.monotonic() < deadline, "no daemon holds a host"
            await asyncio.sleep(0.01)
        await asyncio.sleep(rng.uniform(0.0, 0.1))
        processes[victim].kill()
        assert await processes[victim].wait() == -signal.SIGKILL
        served_at_kill = len(bed.requests)
        stored_at_kill = await stored_urls(db_url)
        outputs = {}
        for name in names:
            if name != victim:
                out, err = await asyncio.wait_for(processes[name].communicate(), 120)
                assert processes[name].returncode == 0, err.decode()
                outputs[name] = out.decode()
        requests = list(bed.requests)

    def url(r: object) -> str:
        return f"{bed.base_urls[r.host]}{r.path}"  # type: ignore[attr-defined]

    pages = [r for r in requests if r.path.startswith("/p/")]
    asked = Counter(url(r) for r in pages)
    # every page once; a second time only if the killed daemon had asked for it and
    # not stored it: it was in flight at the kill, its row still queued
    cut_short = {url(r) for r in requests[:served_at_kill] if r.path.startswith("/p/")}
    cut_short -= stored_at_kill
    again = {u: n for u, n in asked.items() if n > 1}
    assert set(again) <= cut_short
    assert all(n == 2 for n in again.values())
    assert len(again) <= 4  # the killed daemon's concurrency
    # all reachable pages stored, each once, nothing left queued
    exported = await collection(db_url)
    reachable_urls = {bed.page_url(p) for p in reachable(bed)}
    assert set(asked) == reachable_urls <= set(exported)
    assert all(record.fetch_count == 1 for record in exported.values())
    assert await scalar(db_url, "SELECT count(*) FROM urls WHERE state = 0") == 0
    # the survivors both worked, and finished the crawl
    assert holders >= 2
    for out in outputs.values():
        assert "stopped: frontier exhausted" in out
    # politeness across daemons: never two requests at once to one host
    by_host = sorted(requests, key=lambda r: (r.host, r.started))
    for host, served in itertools.groupby(by_host, key=lambda r: r.host):
        for before, after in itertools.pairwise(list(served)):
            assert after.started >= before.finished - 0.005, f"host {host} asked twice at once"
