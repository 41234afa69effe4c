"""The testbed in a process of its own, for benchmarks that must not share its CPU."""

from __future__ import annotations

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
        yield seed, [f"127.0.0.{i + 1}" for i in range(hosts)]
    finally:
        process.terminate()
        process.wait()
