"""The crawler as a process: killed with SIGKILL and resumed, stopped with SIGINT, and
what it loads."""

from __future__ import annotations

import asyncio
import io
import random
import re
import signal
import sqlite3
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from testbed.server import ServerSpec, Testbed
from testbed.web import WebSpec
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


def stored_pages(path: Path) -> dict[str, str | None]:
    """URL -> error of every URL stored in the crawl database."""
    with sqlite3.connect(path) as connection:
        return dict(connection.execute("SELECT url, error FROM urls WHERE state = 1"))


def documents_learned(path: Path) -> int:
    """Documents the saved relevance model has counted (its IDF's corpus)."""
    with sqlite3.connect(path) as connection:
        (blob,) = connection.execute(
            "SELECT state FROM learned_state WHERE name = 'relevance.document_frequency'"
        ).fetchone()
    with np.load(io.BytesIO(blob)) as saved:
        return int(saved["n_documents"][0])


@pytest.mark.slow
async def test_kill_9_at_random_moments_then_resume_loses_nothing_and_repeats_nothing(
    tmp_path: Path,
) -> None:
    path = tmp_path / "crawl.db"
    db_url = f"sqlite+aiosqlite:///{path}"
    rng = random.Random(7)
    # eight kills, each a few milliseconds after a count of stored pages: mid-fetch,
    # mid-commit, mid-refill of a frontier that holds 50 URLs in memory
    kill_points = sorted(rng.sample(range(30, 420), 8))
    # no redirects, so that each page the server serves is one URL of the crawl's
    async with Testbed(WebSpec(pages=500, hosts=3, seed=11, redirect_fraction=0.0)) as bed:

        def page_requests(since: int) -> list[str]:
            """The pages the server was asked for since its request `since` (robots.txt,
            the private pages and the redirect loop are not pages)."""
            return [
                f"{bed.base_urls[r.host]}{r.path}"
                for r in bed.requests[since:]
                if r.path.startswith("/p/")
            ]

        # a first run stops by itself after 20 pages and saves what it learned (a running
        # crawl saves it every 10 s, longer than any run below lasts before its kill)
        first = await asyncio.create_subprocess_exec(
            *run_args(bed, db_url, "--max-pages", "20"),
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
        assert await asyncio.wait_for(first.wait(), 60) == 0
        cut_short: Counter[str] = Counter()  # requested in a killed run, not stored by it
        for kill_after in kill_points:
            before, served_before = stored_pages(path), len(bed.requests)
            process = await asyncio.create_subprocess_exec(
                *run_args(bed, db_url, "--concurrency", "6", "--frontier-memory", "50"),
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.DEVNULL,
            )
            await wait_for_stored(path, kill_after, process)
            await asyncio.sleep(rng.uniform(0.0, 0.05))
            process.kill()
            assert await process.wait() == -signal.SIGKILL
            requested, after = page_requests(served_before), stored_pages(path)
            assert all(n == 1 for n in Counter(requested).values())  # once in a run
            assert not set(requested) & set(before)  # nothing stored is asked for again
            cut_short.update(url for url in requested if url not in after)
        before, served_before = stored_pages(path), len(bed.requests)
        learned_before = documents_learned(path)
        final = await asyncio.create_subprocess_exec(
            *run_args(bed, db_url),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(final.communicate(), 120)
        assert final.returncode == 0, err.decode()
        assert b"stopped: frontier exhausted" in out
        requested_last = page_requests(served_before)
        requests = Counter(page_requests(0))
    pages = stored_pages(path)
    # the server was asked for every reachable page once, and again only after a kill
    # had cut its visit short, before it was stored
    reachable_urls = {bed.page_url(p) for p in reachable(bed)}
    assert set(requests) == reachable_urls <= set(pages)
    assert {url: n - 1 for url, n in requests.items() if n > 1} == +cut_short
    stored_last = {url for url in set(pages) - set(before) if "/p/" in url}
    assert sorted(requested_last) == sorted(stored_last)  # each once
    assert all(p.fetch_count == 1 for p in (await collection(db_url)).values())
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert connection.execute("SELECT count(*) FROM urls WHERE state = 0").fetchone() == (0,)
        assert connection.execute("SELECT count(*) FROM hosts").fetchone()[0] == 3
    # the relevance model came back as last saved: the last run counted its pages on top
    # of it (a fresh model would hold the last run's pages alone)
    scored_last = sum(1 for url in stored_last if pages[url] is None)
    assert scored_last > 0
    assert documents_learned(path) == learned_before + scored_last


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
async def test_a_stop_signal_finishes_what_is_in_flight_and_stores_it(
    tmp_path: Path, stop: signal.Signals
) -> None:
    """Ctrl-C, a service manager's SIGTERM, and a closed terminal's SIGHUP drain alike."""
    path = tmp_path / "crawl.db"
    db_url = f"sqlite+aiosqlite:///{path}"
    async with Testbed(WebSpec(pages=500, hosts=3), ServerSpec(latency=0.3)) as bed:
        process = await asyncio.create_subprocess_exec(
            *run_args(bed, db_url, "--concurrency", "6", "--duration", "60"),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        await wait_for_stored(path, 5, process)
        process.send_signal(stop)
        out, err = await asyncio.wait_for(process.communicate(), 30)
        served = [r for r in bed.requests if r.path.startswith("/p/") and r.status == 200]
    assert process.returncode == 0, err.decode()
    assert b"stopped: asked to stop (a signal)" in out
    assert b"crawl stopped: asked to stop (a signal)" in err  # the log says it alike
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
        rb"\r(?:\x1b\[K)?pages (\d+)  relevant \d+  frontier \d+  in flight \d+  [\d.]+ pages/s",
        shown,
    )
    assert len(lines) >= 2
    assert int(lines[-1]) > 0


@pytest.mark.parametrize("pool", ["mdp", "mm1k"])
async def test_a_crawl_that_sizes_its_pool_loads_neither_scipy_nor_scikit_learn(
    tmp_path: Path, pool: str
) -> None:
    """SciPy (some 50 MB resident with its optimiser) and scikit-learn stay out of a
    crawl's process, the model that sizes its fetcher pool solved: Python's import log
    names every module it loads."""
    db_url = f"sqlite+aiosqlite:///{tmp_path / 'crawl.db'}"
    async with Testbed(WebSpec(pages=300, hosts=2, seed=3), ServerSpec(latency=0.02)) as bed:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-X",
            "importtime",
            "-m",
            "crawler",
            "-v",  # the pool's solves are told at DEBUG
            *run_args(bed, db_url, "--fetchers", pool, "--max-pages", "200")[3:],
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        _out, err = await asyncio.wait_for(process.communicate(), 120)
    log = err.decode()
    assert process.returncode == 0, log[-2000:]
    assert "fetcher pool solved" in log
    imported = {line.rsplit("|", 1)[-1].strip() for line in log.splitlines() if "|" in line}
    assert "numpy" in imported  # the log is the import log
    assert not {name for name in imported if name.split(".")[0] in ("scipy", "sklearn")}
