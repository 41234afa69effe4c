"""The terminal stays readable: on a terminal, log lines scroll above one live progress
line and never land inside it; anywhere else, plain log lines and no carriage return."""

from __future__ import annotations

import asyncio
import os
import pty
import re
import sys
from pathlib import Path

from testbed.server import Testbed
from testbed.web import WebSpec

LOG_LINE = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (DEBUG|INFO|WARNING|ERROR) ")
PROGRESS = re.compile(r"pages \d+ +relevant \d+")
ERASE_LINE = "\x1b[K"


def _crawl_args(bed: Testbed, db: Path, *extra: str) -> list[str]:
    args = [sys.executable, "-m", "crawler", *extra, "run", "--seed", bed.seeds[0]]
    args += ["--topic", bed.topic, "--db", str(db), "--allow-private-networks"]
    args += ["--metrics-port", "0", "--delay", "0.02", "--max-pages", "120", "--processors", "1"]
    for host in bed.hostnames:
        args += ["--allowed-domain", host]
    return args


def _read_until_closed(fd: int) -> bytes:
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # EIO: the last writer closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


async def test_on_a_terminal_no_log_line_lands_inside_the_progress_line(tmp_path: Path) -> None:
    async with Testbed(WebSpec(pages=400, hosts=2, seed=3)) as bed:
        controller, terminal = pty.openpty()
        try:
            process = await asyncio.create_subprocess_exec(
                *_crawl_args(bed, tmp_path / "crawl.db", "-v"),  # DEBUG: many log lines
                stdin=asyncio.subprocess.DEVNULL,
                stdout=terminal,
                stderr=terminal,
            )
        finally:
            os.close(terminal)
        try:
            reading = asyncio.create_task(asyncio.to_thread(_read_until_closed, controller))
            assert await asyncio.wait_for(process.wait(), 90) == 0
            output = (await asyncio.wait_for(reading, 30)).decode(errors="replace")
        finally:
            os.close(controller)
    segments = [
        segment.replace(ERASE_LINE, "").strip()
        for line in output.split("\n")
        for segment in line.split("\r")
    ]
    segments = [segment for segment in segments if segment]
    progress = [i for i, s in enumerate(segments) if PROGRESS.search(s)]
    logs = [i for i, s in enumerate(segments) if LOG_LINE.search(s)]
    assert progress, output[-2000:]
    assert any(i > progress[0] for i in logs)  # logged while the progress line was shown
    mixed = [s for s in segments if PROGRESS.search(s) and LOG_LINE.search(s)]
    assert mixed == []
    # each log line begins its own line on the screen
    assert all(LOG_LINE.match(segments[i]) for i in logs)


async def test_off_a_terminal_logs_are_plain_lines(tmp_path: Path) -> None:
    async with Testbed(WebSpec(pages=400, hosts=2, seed=3)) as bed:
        process = await asyncio.create_subprocess_exec(
            *_crawl_args(bed, tmp_path / "crawl.db", "-v"),
            "--progress-interval",
            "0.3",
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(process.communicate(), 90)
    assert process.returncode == 0
    text = err.decode()
    assert "\r" not in text
    assert "\x1b" not in text
    assert any("progress: pages" in line for line in text.splitlines())
    assert all(LOG_LINE.match(line) for line in text.splitlines() if line), text[:2000]
    assert "pages fetched" in out.decode()


async def test_quiet_logs_warnings_only(tmp_path: Path) -> None:
    async with Testbed(WebSpec(pages=200, hosts=1, seed=3)) as bed:
        process = await asyncio.create_subprocess_exec(
            *_crawl_args(bed, tmp_path / "crawl.db", "-q"),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(process.communicate(), 90)
    assert process.returncode == 0
    assert " INFO " not in err.decode()
    assert " DEBUG " not in err.decode()
    assert "pages fetched" in out.decode()
