"""Soak: a long crawl of a large testbed with many hosts, sampled as it runs.

The testbed and the crawler each run in a process of their own; the crawler is
`crawler run` with a bounded frontier. Every `--every` seconds this samples the
crawler's pages stored, frontier and asyncio tasks (from /metrics), its resident
memory, open file descriptors and threads (from /proc), and prints a line; at the end,
a summary of the first and last thirds, so a leak or a slowdown shows as a difference.
With `--db FILE` the crawl's database is kept, for `crawler report` to draw its timeline.

    python bench/soak.py [--minutes 30] [--pages 1000000] [--hosts 50] [--delay 0.1]
                         [--db soak.db]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from testbed_process import served_testbed, wait_until_up


def metric(text: str, name: str) -> float:
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return float("nan")


def proc(pid: int) -> tuple[float, int, int]:
    """Resident MB, open file descriptors, threads."""
    status = Path(f"/proc/{pid}/status").read_text()
    rss = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS"))
    threads = next(
        int(line.split()[1]) for line in status.splitlines() if line.startswith("Threads")
    )
    return rss / 1024, len(os.listdir(f"/proc/{pid}/fd")), threads


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--pages", type=int, default=1_000_000)
    parser.add_argument("--hosts", type=int, default=50)
    parser.add_argument("--delay", type=float, default=0.1, help="seconds between requests")
    parser.add_argument("--frontier-memory", type=int, default=50_000)
    parser.add_argument("--every", type=float, default=30.0)
    parser.add_argument("--db", type=Path, help="keep the crawl's database in this file")
    args = parser.parse_args()
    if args.db is not None and args.db.exists():
        parser.error(f"--db {args.db} exists: the soak starts from an empty database")
    with (
        tempfile.TemporaryDirectory() as scratch,
        served_testbed(port=18900, pages=args.pages, hosts=args.hosts) as (seed, hosts),
    ):
        port = 19410
        crawler = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "crawler",
                "run",
                "--seed",
                seed,
                "--topic",
                "solar energy",
                "--db",
                f"sqlite+aiosqlite:///{args.db or Path(scratch) / 'soak.db'}",
                "--duration",
                str(args.minutes * 60),
                "--delay",
                str(args.delay),
                "--concurrency",
                "32",
                "--frontier-memory",
                str(args.frontier_memory),
                "--metrics-port",
                str(port),
                "--allow-private-networks",
                "--no-store-text",
                *(arg for host in hosts for arg in ("--allowed-domain", host)),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        url = f"http://127.0.0.1:{port}/metrics"
        wait_until_up(url)
        started = time.monotonic()
        print(
            "minute  pages/s  stored  frontier  in-memory  RSS MB  fds  threads  tasks",
            flush=True,
        )
        samples = []
        last_stored, last_time = 0.0, started
        while crawler.poll() is None:
            time.sleep(args.every)
            try:
                with urllib.request.urlopen(url, timeout=5) as response:
                    text = response.read().decode()
                rss, fds, threads = proc(crawler.pid)
            except (OSError, StopIteration):
                break
            now = time.monotonic()
            stored = metric(text, "crawler_pages_stored_total")
            rate = (stored - last_stored) / (now - last_time)
            last_stored, last_time = stored, now
            row = (
                (now - started) / 60,
                rate,
                stored,
                metric(text, "crawler_frontier_size"),
                metric(text, "crawler_frontier_in_memory"),
                rss,
                fds,
                threads,
                metric(text, "crawler_asyncio_tasks"),
            )
            samples.append(row)
            print(
                f"{row[0]:6.1f} {row[1]:8.1f} {row[2]:7.0f} {row[3]:9.0f} {row[4]:10.0f} "
                f"{row[5]:7.1f} {row[6]:4d} {row[7]:8d} {row[8]:6.0f}",
                flush=True,
            )
        crawler.wait()
    third = max(len(samples) // 3, 1)
    for label, part in (("first third", samples[:third]), ("last third", samples[-third:])):
        print(
            f"{label}: {statistics.median(s[1] for s in part):.1f} pages/s, "
            f"RSS {statistics.median(s[5] for s in part):.0f} MB, "
            f"fds {max(s[6] for s in part)}, threads {max(s[7] for s in part)}, "
            f"tasks {max(s[8] for s in part):.0f} (medians, maxima)"
        )


if __name__ == "__main__":
    main()
