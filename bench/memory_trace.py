"""Where a long crawl's memory goes: tracemalloc snapshots while it runs.

The testbed runs in its own process; the crawler runs here with tracemalloc on (about
three times slower), politeness as in the soak. Every --every seconds this prints the
traced total and the resident size; at the end, the lines whose allocations grew most
between the first snapshot after the warm-up and the last.

    python bench/memory_trace.py [--minutes 10] [--pages 1000000] [--hosts 50] [--delay 0.1]

With --seeds-file it crawls a web served already, kept to those seeds' hosts (the real
web of `bench/realweb/`: --seeds-file /tmp/realweb/seeds.txt), instead of the testbed.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from urllib.parse import urlsplit

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from testbed_process import served_testbed  # noqa: E402

FRAMES = 6


def resident_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * resource.getpagesize() / 2**20


async def trace(args: argparse.Namespace, seeds: list[str], hosts: list[str], db: str) -> None:
    from prometheus_client import CollectorRegistry

    from crawler.config import CrawlConfig
    from crawler.service import run_crawl

    registry = CollectorRegistry()
    config = CrawlConfig(
        seeds=tuple(seeds),
        topic="solar energy",
        db=db,
        duration=args.minutes * 60,
        delay=args.delay,
        concurrency=32,
        frontier_memory=args.frontier_memory,
        metrics_port=0,
        allow_private_networks=True,
        store_text=False,
        allowed_domains=tuple(hosts),
    )
    crawl = asyncio.create_task(run_crawl(config, registry=registry, handle_signals=False))
    started = time.monotonic()
    first: tracemalloc.Snapshot | None = None
    last: tracemalloc.Snapshot | None = None
    print("minute  stored  traced MB  RSS MB  tasks", flush=True)
    while True:
        await asyncio.wait([crawl], timeout=args.every)
        if crawl.done():  # what a finished crawl let go of is not what it grew by
            break
        minute = (time.monotonic() - started) / 60
        snapshot = tracemalloc.take_snapshot()
        if minute >= args.warm_up and first is None:
            first = snapshot
        last = snapshot
        stored = registry.get_sample_value("crawler_pages_stored_total") or 0
        traced = tracemalloc.get_traced_memory()[0] / 2**20
        print(
            f"{minute:6.1f} {stored:7.0f} {traced:10.1f} {resident_mb():7.1f} "
            f"{len(asyncio.all_tasks()):6d}",
            flush=True,
        )
    await crawl
    if first is None or last is None or first is last:
        print("too short to compare: raise --minutes or lower --warm-up")
        return
    print(f"\ngrowth from minute {args.warm_up:g} to the end, by allocating place:")
    for stat in last.compare_to(first, "traceback")[: args.top]:
        print(f"{stat.size_diff / 2**20:+8.2f} MB {stat.count_diff:+9d} blocks")
        for line in stat.traceback.format()[-2 * FRAMES :]:
            print("    " + line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--warm-up", type=float, default=2.0, help="minutes before comparing")
    parser.add_argument("--pages", type=int, default=1_000_000)
    parser.add_argument("--hosts", type=int, default=50)
    parser.add_argument("--delay", type=float, default=0.1)
    parser.add_argument("--frontier-memory", type=int, default=50_000)
    parser.add_argument("--every", type=float, default=30.0)
    parser.add_argument("--top", type=int, default=12)
    parser.add_argument("--seeds-file", type=Path, help="crawl the web these seeds are on")
    args = parser.parse_args()
    tracemalloc.start(FRAMES)
    if args.seeds_file:
        seeds = args.seeds_file.read_text().split()
        hosts = sorted({urlsplit(url).hostname or "" for url in seeds})
        with tempfile.TemporaryDirectory() as scratch:
            asyncio.run(trace(args, seeds, hosts, f"sqlite+aiosqlite:///{scratch}/trace.db"))
        return
    with (
        tempfile.TemporaryDirectory() as scratch,
        served_testbed(port=18950, pages=args.pages, hosts=args.hosts) as (seed, hosts),
    ):
        asyncio.run(trace(args, [seed], hosts, f"sqlite+aiosqlite:///{scratch}/trace.db"))


if __name__ == "__main__":
    main()
