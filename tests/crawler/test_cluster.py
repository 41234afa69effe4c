"""Several crawler daemons sharing one crawl through a real PostgreSQL server."""

from __future__ import annotations

import asyncio
import io
import itertools
import random
import signal
import sys
import time
from collections import Counter

import numpy as np
import pytest
from sqlalchemy import text

import storage
from crawler.cli import main
from crawler.config import ConfigError
from testbed.server import ServerSpec, Testbed
from testbed.web import WebSpec
from tests.crawler.helpers import (
    SEEN,
    collection,
    crawl,
    html,
    links,
    reachable,
    redirect,
    serving,
    site,
)
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


async def owners(db_url: str) -> set[str]:
    """The daemons holding a lease of a host."""
    engine = storage.open_engine(db_url)
    try:
        async with engine.connect() as connection:
            return set((await storage.held_hosts(connection)).values())
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
        holders = await owners(db_url)
        assert holders, "no daemon holds a host"
        victim = rng.choice(sorted(holders))
        await asyncio.sleep(rng.uniform(0.0, 0.1))
        processes[victim].kill()
        assert await processes[victim].wait() == -signal.SIGKILL
        await asyncio.sleep(0.2)  # the server records a request when its answer is sent
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
    # not stored it: fetched, or waiting for its processor or writer at the kill, its
    # row still queued
    cut_short = {url(r) for r in requests[:served_at_kill] if r.path.startswith("/p/")}
    cut_short -= stored_at_kill
    again = {u: n for u, n in asked.items() if n > 1}
    assert set(again) <= cut_short
    assert all(n == 2 for n in again.values())
    # all reachable pages stored, each once, nothing left queued
    exported = await collection(db_url)
    reachable_urls = {bed.page_url(p) for p in reachable(bed)}
    assert set(asked) == reachable_urls <= set(exported)
    assert all(record.fetch_count == 1 for record in exported.values())
    assert await scalar(db_url, "SELECT count(*) FROM urls WHERE state = 0") == 0
    # the survivors both worked, and finished the crawl
    assert len(holders) >= 2
    for out in outputs.values():
        assert "stopped: frontier exhausted" in out
    # `crawler status` has a row for each daemon: the survivors stopped, the victim not
    shown = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "crawler", "status", "--db", db_url, stdout=asyncio.subprocess.PIPE
    )
    report, _ = await shown.communicate()
    cells = [line.split() for line in report.decode().splitlines()]
    rows = {row[0]: row for row in cells if row and row[0] in names}
    assert set(rows) == set(names)
    for name, row in rows.items():
        assert row[1] == ("running" if name == victim else "stopped")
    assert sum(int(row[2]) for name, row in rows.items() if name != victim) > 0
    # politeness across daemons: never two requests at once to one host
    by_host = sorted(requests, key=lambda r: (r.host, r.started))
    for host, served in itertools.groupby(by_host, key=lambda r: r.host):
        for before, after in itertools.pairwise(list(served)):
            assert after.started >= before.finished - 0.005, f"host {host} asked twice at once"


async def saved_documents(db_url: str, name: str) -> int:
    """Documents counted in a saved relevance model."""
    engine = storage.open_engine(db_url)
    try:
        async with engine.connect() as connection:
            state = await storage.load_learned_state(connection, name)
    finally:
        await engine.dispose()
    assert state is not None
    with np.load(io.BytesIO(state)) as saved:
        return int(saved["n_documents"][0])


@pytest.mark.parametrize("policy", ["best-first", "qlearning"])
async def test_a_daemon_scores_with_what_the_crawls_other_daemons_learned(
    postgres_url: str, db_url: str, policy: str
) -> None:
    """Daemon a stores 30 pages that all say "solar" and never "energy"; daemon b then
    crawls a page of its own host on the same database. Scored with the whole crawl's
    document frequencies, "solar" weighs less there than on a database of its own, so
    the page scores otherwise; each daemon saves only what its own pages taught."""
    many = {f"/{i}": html(links(f"/{i + 1}", words="solar flares sunspots")) for i in range(30)}
    page = {"/": html(links(words="solar panels and energy storage"))}
    async with serving(site(many)) as base_a, serving(site(page), host="127.0.0.2") as base_b:
        first_page = base_a + "0"
        shared_crawl = {"lease_seconds": 2, "policy": policy}
        await crawl(postgres_url, [first_page], daemon_id="a", **shared_crawl)
        await crawl(postgres_url, [base_b], daemon_id="b", **shared_crawl)
        await crawl(db_url, [base_b], policy=policy)  # alone
    shared = (await collection(postgres_url))[base_b].relevance
    alone = (await collection(db_url))[base_b].relevance
    assert shared is not None
    assert alone is not None
    assert shared < alone - 0.01
    assert await saved_documents(postgres_url, "relevance.document_frequency@a") == 1 + 30
    assert await saved_documents(postgres_url, "relevance.document_frequency@b") == 1 + 1


async def test_a_redirect_to_a_host_the_daemon_does_not_hold_is_queued_for_its_holder(
    postgres_url: str,
) -> None:
    """The daemon holds the seed's host only; the seed redirects to another host. The
    hop is not made: the target is queued in the database, its host claimed by whoever
    takes it (here the same daemon, at its next lease tick), and fetched once, in its
    own visit, on its own row."""
    other = site({"/target": html(links())})
    async with serving(other, host="127.0.0.2") as base_y:
        target = base_y + "target"
        async with serving(site({"/": redirect(target)})) as base_x:
            hosts = ("127.0.0.1", "127.0.0.2")
            summary = await crawl(
                postgres_url, [base_x], daemon_id="a", lease_seconds=2, allowed_domains=hosts
            )
    rows = await collection(postgres_url)
    assert summary.stop_reason == "frontier exhausted"
    assert (rows[base_x].error, rows[base_x].final_url) == ("redirect_queued", target)
    assert (rows[target].status, rows[target].error) == (200, None)
    assert rows[target].discovered_from == base_x
    assert other[SEEN].paths().count("/target") == 1


async def test_a_crawl_of_another_topic_on_a_shared_database_is_an_error_at_start(
    postgres_url: str,
) -> None:
    async with serving(site({"/": html(links())})) as base:
        await crawl(postgres_url, [base], max_pages=1, daemon_id="first")
        with pytest.raises(ConfigError, match="this database holds a crawl of another topic"):
            await crawl(postgres_url, [base], topic="volcanic eruptions", daemon_id="second")
        # the same topic joins it
        summary = await crawl(postgres_url, [base], daemon_id="third")
    assert summary.stop_reason == "frontier exhausted"


def test_an_unreachable_database_is_a_clear_error_naming_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    db = "postgresql+asyncpg://crawler:secret@127.0.0.1:1/crawl"
    argv = ["run", "--seed", "http://127.0.0.1:9/", "--topic", "solar energy", "--db", db]
    with pytest.raises(SystemExit) as stopped:
        main([*argv, "--allow-private-networks", "--metrics-port", "0"])
    assert stopped.value.code == 1
    message = capsys.readouterr().err
    assert (
        "cannot prepare the database postgresql+asyncpg://crawler:***@127.0.0.1:1/crawl" in message
    )
    assert "secret" not in message
