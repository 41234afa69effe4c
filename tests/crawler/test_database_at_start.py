"""What a crawl's start refuses on its SQLite file: a crawl of another topic, a file it
cannot write, a file another crawl is running on."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

import storage
from crawler.cli import main
from crawler.config import ConfigError
from testbed.server import ServerSpec, Testbed
from testbed.web import WebSpec
from tests.crawler.helpers import SEEN, collection, crawl, html, links, serving, site, stored
from tests.crawler.test_process import run_args, wait_for_stored


async def crawl_meta(db_url: str) -> dict[str, str]:
    engine = storage.open_engine(db_url)
    try:
        async with engine.connect() as connection:
            return await storage.get_meta(connection)
    finally:
        await engine.dispose()


async def test_another_topic_on_a_crawled_file_is_an_error_at_start_that_writes_nothing(
    db_url: str,
) -> None:
    app = site({"/": html(links("/a")), "/a": html(links()), "/b": html(links())})
    async with serving(app) as base:
        await crawl(db_url, [base], max_pages=1)
        meta, urls, served = (
            await crawl_meta(db_url),
            await collection(db_url),
            len(app[SEEN].paths()),
        )
        with pytest.raises(ConfigError, match=r"holds a crawl of another topic \('solar energy'\)"):
            await crawl(db_url, [base, f"{base}b"], topic="volcanic eruptions")
        assert len(app[SEEN].paths()) == served  # nothing fetched
        assert await crawl_meta(db_url) == meta
        assert await collection(db_url) == urls
        # the same topic resumes the crawl
        summary = await crawl(db_url, [base])
    assert summary.stop_reason == "frontier exhausted"
    assert set(await collection(db_url)) == {base, f"{base}a"}


def without_override() -> list[str]:
    """The prefix that runs a command without root's power to write what its mode
    forbids (as root, a file's mode would not stop the crawler)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    prefix = [setpriv or "setpriv", "--bounding-set=-dac_override,-dac_read_search", "--"]
    if setpriv is None or subprocess.run([*prefix, "true"], check=False).returncode != 0:
        pytest.skip("running as root, and setpriv cannot drop the power to write any file")
    return prefix


def crawler_run(db_url: str, seed: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "crawler",
        "run",
        *("--seed", seed, "--topic", "solar energy", "--db", db_url),
        *("--allow-private-networks", "--metrics-port", "0", "--delay", "0"),
    ]


@pytest.mark.parametrize(("read_only", "mode"), [("file", 0o444), ("directory", 0o555)])
async def test_a_read_only_database_is_a_one_line_error_naming_it(
    tmp_path: Path, read_only: str, mode: int
) -> None:
    directory = tmp_path / "crawl"
    directory.mkdir()
    path = directory / "crawl.db"
    db_url = f"sqlite+aiosqlite:///{path}"
    app = site({"/": html(links("/a")), "/a": html(links())})
    async with serving(app) as base:
        await crawl(db_url, [base], max_pages=1)
        served = len(app[SEEN].paths())
        made_read_only = path if read_only == "file" else directory
        made_read_only.chmod(mode)
        try:
            process = await asyncio.create_subprocess_exec(
                *without_override(),
                *crawler_run(db_url, base),
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.PIPE,
            )
            _, err = await asyncio.wait_for(process.communicate(), 60)
        finally:
            made_read_only.chmod(0o755)
        assert len(app[SEEN].paths()) == served  # nothing fetched
    assert process.returncode == 1
    (line,) = err.decode().splitlines()
    assert line.startswith("crawler: error: ")
    assert str(path) in line
    assert "read-only" in line


async def test_a_second_crawl_of_a_file_in_use_is_refused_until_the_first_is_killed(
    tmp_path: Path,
) -> None:
    path = tmp_path / "crawl.db"
    db_url = f"sqlite+aiosqlite:///{path}"
    # the second crawl's own seed, which the first never links to
    other = site({"/": html(links())})
    async with (
        Testbed(WebSpec(pages=5000, hosts=3), ServerSpec(latency=0.02)) as bed,
        serving(other) as other_seed,
    ):
        first = await asyncio.create_subprocess_exec(
            *run_args(bed, db_url),
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
        try:
            await wait_for_stored(path, 5, first)
            second = await asyncio.create_subprocess_exec(
                *run_args(bed, db_url, "--seed", other_seed, "--max-pages", "3"),
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.PIPE,
            )
            _, err = await asyncio.wait_for(second.communicate(), 60)
            # what only reads the database goes on beside the crawl
            assert await asyncio.to_thread(main, ["status", "--db", db_url]) == 0
            export = tmp_path / "export.jsonl"
            assert (
                await asyncio.to_thread(main, ["export", "--db", db_url, "--out", str(export)]) == 0
            )
            assert len(export.read_text().splitlines()) >= 5
            assert first.returncode is None  # the first still crawls
        finally:
            first.kill()
            assert await first.wait() == -signal.SIGKILL
        assert second.returncode == 1
        (line,) = err.decode().splitlines()
        assert str(path) in line
        assert f"pid {first.pid} on {socket.gethostname()}" in line
        assert other[SEEN].paths() == []  # the second asked nothing
        # the kernel released the killed crawl's lock: the next one runs
        before = stored(path)
        third = await asyncio.create_subprocess_exec(
            *run_args(bed, db_url, "--max-pages", "5"),
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
        assert await asyncio.wait_for(third.wait(), 60) == 0
    assert stored(path) > before
