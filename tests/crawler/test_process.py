"""The crawler as a process: killed with SIGKILL and resumed, stopped with SIGINT."""

from __future__ import annotations

import asyncio
import random
import re
import signal
import sqlite3
import sys
import time
from pathlib import Path

from crawler.testbed import ServerSpec, Testbed
from crawler.testbed_web import WebSpec
from tests.crawler.helpers import collection, reachable, stored


def run_args(bed: Testbed, db_url: str, *extra: str) -> list[str]:
    args = [
        sys.executable,
        "-m",
        "crawler",
        "run",
        "--seed",
        bed.seeds[0],
        "--topic",
        bed.topic,
        "--db",
        db_url,
        "--allow-private-networks",
        "--metrics-port",
        "0",
        "--delay",
        "0",
    ]
    for host in bed.hostnames:
        args += ["--allowed-domain", host]
    return args + list(extra)


async def wait_for_stored(path: Path, at_least: int, process: asyncio.subprocess.Process) -> None:
    deadline = time.monotonic() + 60
    while stored(path) < at_least:
        assert process.returncode is None, "the crawler exited early"
        assert time.monotonic() < deadline, f"fewer than {at_least} pages stored in time"
        await asyncio.sleep(0.05)


async def test_kill_9_at_random_moments_then_resume_loses_nothing_and_repeats_nothing(
    tmp_path: Path,
) -> None:
    path = tmp_path / "crawl.db"
    db_url = f"sqlite+aiosqlite:///{path}"
    rng = random.Random(7)
    # eight kills, each a few milliseconds after a count of stored pages: mid-fetch,
    # mid-commit, mid-refill of a frontier that holds 50 URLs in memory
    kill_points = sorted(rng.sample(range(20, 420), 8))
    async with Testbed(WebSpec(pages=500, hosts=3, seed=11)) as bed:
        for kill_after in kill_points:
            process = await asyncio.create_subprocess_exec(
                *run_args(bed, db_url, "--concurrency", "6", "--frontier-memory", "50"),
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.DEVNULL,
            )
            await wait_for_stored(path, kill_after, process)
            await asyncio.sleep(rng.uniform(0.0, 0.05))
            process.kill()
            assert await process.wait() == -signal.SIGKILL
        final = await asyncio.create_subprocess_exec(
            *run_args(bed, db_url),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(final.communicate(), 120)
        assert final.returncode == 0, err.decode()
        assert b"stopped: frontier exhausted" in out
    pages = await collection(db_url)
    covered = {p.final_url or p.url for p in pages.values()}
    assert [p for p in reachable(bed) if bed.page_url(p) not in covered] == []
    assert all(p.fetch_count == 1 for p in pages.values())
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert connection.execute("SELECT count(*) FROM urls WHERE state = 0").fetchone() == (0,)
        names = {row[0] for row in connection.execute("SELECT name FROM learned_state")}
        assert "relevance.document_frequency" in names
        assert connection.execute("SELECT count(*) FROM hosts").fetchone()[0] == 3


async def test_sigint_finishes_what_is_in_flight_and_stores_it(tmp_path: Path) -> None:
    path = tmp_path / "crawl.db"
    db_url = f"sqlite+aiosqlite:///{path}"
    async with Testbed(WebSpec(pages=500, hosts=3), ServerSpec(latency=0.3)) as bed:
        process = await asyncio.create_subprocess_exec(
            *run_args(bed, db_url, "--concurrency", "6", "--duration", "60"),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        await wait_for_stored(path, 5, process)
        process.send_signal(signal.SIGINT)
        out, err = await asyncio.wait_for(process.communicate(), 30)
        served = [r for r in bed.requests if r.path.startswith("/p/") and r.status == 200]
    assert process.returncode == 0, err.decode()
    assert b"stopped: stopped" in out
    pages = await collection(db_url)
    stored_urls = {p.final_url or p.url for p in pages.values()}
    fetched_urls = {f"{bed.base_urls[r.host]}{r.path}" for r in served}
    assert fetched_urls <= stored_urls  # every page the server sent was kept


async def test_a_terminal_gets_a_live_progress_line(tmp_path: Path) -> None:
    import os
    import pty

    db_url = f"sqlite+aiosqlite:///{tmp_path / 'crawl.db'}"
    controller, terminal = pty.openpty()
    async with Testbed(WebSpec(pages=400, hosts=2), ServerSpec(latency=0.01)) as bed:
        process = await asyncio.create_subprocess_exec(
            *run_args(bed, db_url, "--duration", "2.5", "--delay", "0.01"),
            stdout=asyncio.subprocess.DEVNULL,
            stderr=terminal,
        )
        os.close(terminal)
        assert await asyncio.wait_for(process.wait(), 30) == 0
    shown = b""
    while True:
        try:
            chunk = os.read(controller, 4096)
        except OSError:  # the terminal's other end is closed: all was read
            break
        if not chunk:
            break
        shown += chunk
    os.close(controller)
    lines = re.findall(
        rb"\rpages (\d+)  relevant \d+  frontier \d+  in flight \d+  [\d.]+ pages/s", shown
    )
    assert len(lines) >= 2
    assert int(lines[-1]) > 0
