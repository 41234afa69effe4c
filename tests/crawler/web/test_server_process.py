"""The daemon's HTTP server in a process of its own: it answers while the crawl's loop is
busy, it ends with the crawl (a kill -9 included), and a port it cannot take is an
error naming it."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.request import urlopen

import pytest
from aiohttp import ClientError, ClientSession, ClientTimeout

from testbed.demo import free_port
from tests.crawler.helpers import crawl, html, serving, site
from tests.crawler.web.daemon import WAIT, chain, running_daemon, wait_for

ROUTES = {
    "/": html('<html><body><p>wind</p><a href="/chain/0">on</a></body></html>'),
    "/chain/{n}": chain(),
}
BLOCKED = 5.0  # seconds the crawl's loop is held, at most


async def test_the_status_and_a_search_answer_while_the_crawl_loop_is_blocked(
    tmp_path: Path,
) -> None:
    db_url = f"sqlite+aiosqlite:///{tmp_path / 'crawl.db'}"
    async with running_daemon(db_url, ROUTES) as daemon:
        answered: list[int] = []
        done = threading.Event()

        def ask() -> None:
            for path in ("/api/v1/status", "/api/v1/search?q=wind", "/"):
                with urlopen(daemon.api + path, timeout=BLOCKED) as response:
                    answered.append(response.status)
            done.set()

        asker = threading.Thread(target=ask)
        asker.start()
        # the crawl runs on this loop: hold it, as a page's analysis or a batch would
        answered_while_held = hold_the_loop_until(done)
        await asyncio.to_thread(asker.join)
    assert answered_while_held, "the API waited for the crawl's loop"
    assert answered == [200, 200, 200]


def hold_the_loop_until(done: threading.Event) -> bool:
    """Hold the calling loop until `done`, BLOCKED seconds at most; whether it came."""
    held_until = time.monotonic() + BLOCKED
    while not done.is_set() and time.monotonic() < held_until:
        time.sleep(0.01)
    return done.is_set()


def socket_directories() -> set[Path]:
    return set(Path(tempfile.gettempdir()).glob("crawler-*"))


def children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (Linux's /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rpartition(")")[2].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def cmdline(pid: int) -> str:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def running(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads processes from Linux's /proc")
async def test_the_server_process_ends_when_the_crawl_is_killed(tmp_path: Path) -> None:
    port = free_port()
    async with (
        serving(site(ROUTES)) as base,
        ClientSession(timeout=ClientTimeout(total=5)) as client,
    ):
        crawler = await asyncio.create_subprocess_exec(
            *(sys.executable, "-m", "crawler", "run", "--seed", base, "--topic", "wind"),
            *("--db", f"sqlite+aiosqlite:///{tmp_path / 'crawl.db'}"),
            *("--allow-private-networks", "--metrics-port", str(port)),
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
        try:

            async def healthy() -> bool:
                assert crawler.returncode is None, "the crawl ended"
                try:
                    async with client.get(f"http://127.0.0.1:{port}/healthz") as response:
                        return response.status == 200
                except ClientError:
                    return False

            await wait_for(healthy, "answering")
            (server,) = [
                pid for pid in children(crawler.pid) if "crawler.web.server_process" in cmdline(pid)
            ]
            crawler.send_signal(signal.SIGKILL)
            await crawler.wait()

            async def gone() -> bool:
                return not running(server)

            await wait_for(gone, "ended with the crawl")
        finally:
            if crawler.returncode is None:
                crawler.kill()
                await crawler.wait()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=1).close()


async def test_a_server_process_that_dies_is_said_in_the_log_and_the_crawl_goes_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    db_url = f"sqlite+aiosqlite:///{tmp_path / 'crawl.db'}"
    async with running_daemon(db_url, ROUTES) as daemon:
        (server,) = [
            pid for pid in children(os.getpid()) if "crawler.web.server_process" in cmdline(pid)
        ]
        os.kill(server, signal.SIGKILL)

        async def said() -> bool:
            return "HTTP server process ended" in caplog.text

        await wait_for(said, "said in the log")
        fetched = len(daemon.seen.requests)

        async def goes_on() -> bool:
            return len(daemon.seen.requests) > fetched

        await wait_for(goes_on, "crawling")


async def test_a_crawl_cancelled_at_any_moment_of_its_start_leaves_no_server_process(
    tmp_path: Path,
) -> None:
    async with serving(site(ROUTES)) as base:
        for attempt in range(8):
            crawling = asyncio.create_task(
                crawl(
                    f"sqlite+aiosqlite:///{tmp_path / f'crawl{attempt}.db'}",
                    [base],
                    metrics_host="127.0.0.1",
                    metrics_port=free_port(),
                    duration=30,
                )
            )
            await asyncio.sleep(0.15 * attempt)  # from before the server starts to after
            crawling.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await crawling
            left = [
                pid
                for pid in children(os.getpid())
                if "crawler.web.server_process" in cmdline(pid) and running(pid)
            ]
            assert left == [], f"cancelled after {0.15 * attempt:.2f} s"


async def test_a_port_in_use_is_an_error_naming_it_and_leaves_nothing(tmp_path: Path) -> None:
    before = socket_directories()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        async with serving(site(ROUTES)) as base:
            with pytest.raises(OSError, match=f"cannot serve metrics on 127.0.0.1:{port}"):
                await asyncio.wait_for(
                    crawl(
                        f"sqlite+aiosqlite:///{tmp_path / 'crawl.db'}",
                        [base],
                        metrics_host="127.0.0.1",
                        metrics_port=port,
                        duration=30,
                    ),
                    WAIT,
                )
    assert socket_directories() == before
    server_processes = [
        pid for pid in children(os.getpid()) if "crawler.web.server_process" in cmdline(pid)
    ]
    assert [pid for pid in server_processes if running(pid)] == []
