"""The testbed in a process of its own, for benchmarks that must not share its CPU."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager


def wait_until_up(url: str, seconds: float = 120.0) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            with urllib.request.urlopen(url, timeout=1):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


@contextmanager
def served_testbed(
    *, port: int, pages: int, hosts: int, options: Sequence[str] = ()
) -> Iterator[tuple[str, list[str]]]:
    """Serve the testbed while the block runs; yields its seed URL and host addresses."""
    with served_testbed_process(port=port, pages=pages, hosts=hosts, options=options) as (
        seed,
        addresses,
        _,
    ):
        yield seed, addresses


@contextmanager
def served_testbed_process(
    *, port: int, pages: int, hosts: int, options: Sequence[str] = ()
) -> Iterator[tuple[str, list[str], subprocess.Popen[bytes]]]:
    """`served_testbed`, and the process serving it (to read its CPU time)."""
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "crawler",
            "testbed",
            "--port",
            str(port),
            "--pages",
            str(pages),
            "--hosts",
            str(hosts),
            *options,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        seed = f"http://127.0.0.1:{port}/p/0"
        wait_until_up(seed)
        yield seed, [f"127.0.0.{i + 1}" for i in range(hosts)], process
    finally:
        process.terminate()
        process.wait()


def cpu_seconds(pid: int) -> float:
    """The CPU time (user and system) a running process has used so far."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
