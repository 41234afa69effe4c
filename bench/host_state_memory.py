"""Memory of per-host state as a crawl meets more and more hosts: the working set bounded
(`host_memory`, 10,000 by default) against a bound so large that nothing leaves memory
(as before the bound).

Each run, a process of its own, drives the per-host state holders the engine uses
(politeness, the robots.txt cache, crawler.fetch.host_memory) and the storage writer over a
real SQLite file, as visits and checkpoints do, without fetching, on a clock that goes
as a crawl of 350 visits a second would: each step visits a new host (a robots.txt of
about 2 KB, parsed; Crawl-delay 1 s), and one step in ten re-visits an earlier host at
random if its delay is over (read back from the database if memory dropped it). A
checkpoint every 10 s saves the changed hosts and drops idle ones, as the engine's do.
Resident memory (and with --trace the Python heap, by tracemalloc) is read at each
sample size; runs of the two kinds interleave; medians.

    python bench/host_state_memory.py --hosts 100000 --runs 3
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import storage
from crawler.config import defaults
from crawler.fetch.host_memory import HostMemory
from crawler.fetch.politeness import Politeness
from crawler.fetch.robots import RobotsCache
from crawler.store.records import StateWrite
from crawler.store.writer import StorageWriter

UNBOUNDED = 10**9
VISITS_PER_SECOND = 350.0  # as in the soak (docs/reliability.md)
CHECKPOINT_SECONDS = 10.0  # crawler.engine.checkpoints.CHECKPOINT_INTERVAL
REVISIT_SHARE = 0.1


class Clock:
    """Monotonic seconds, advanced by the visits; the wall clock is a fixed offset."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def wall(self) -> float:
        return 1_700_000_000.0 + self.now


def resident_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096 / 2**20


def robots_txt(host: str) -> str:
    """About 2 KB, as robots.txt files commonly are; each host's its own."""
    rules = "".join(f"Disallow: /{host}/private/{i}/\n" for i in range(40))
    return f"User-agent: *\n{rules}Crawl-delay: 1\nSitemap: https://{host}/sitemap.xml\n"


async def run(hosts: int, capacity: int, samples: list[int], seed: int, trace: bool) -> dict:
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as directory:
        db = storage.open_engine(f"sqlite+aiosqlite:///{Path(directory) / 'hosts.db'}")
        await storage.create_schema(db)
        polite = Politeness(delay=0.0)
        robots = RobotsCache(user_agent="bench", ttl=86_400.0, retry=600.0)
        read_back = 0

        def counted() -> None:
            nonlocal read_back
            read_back += 1

        clock = Clock()
        memory = HostMemory(
            db=db,
            politeness=polite,
            robots=robots,
            capacity=capacity,
            clock=clock,
            wall_clock=clock.wall,
            on_read_back=counted,
        )
        async with db.connect() as connection:
            await memory.restore(connection)
        writer = StorageWriter(db, on_committed=lambda committed: None)
        writing = asyncio.create_task(writer.run())
        if trace:
            tracemalloc.start()
        started, cpu_started = time.perf_counter(), time.process_time()
        rows = []

        def sample(new: int) -> None:
            gc.collect()
            rows.append(
                {
                    "hosts": new,
                    "in_memory": len(memory),
                    "resident_mb": resident_mb(),
                    "heap_mb": tracemalloc.get_traced_memory()[0] / 2**20,
                    "read_back": read_back,
                    "seconds": time.perf_counter() - started,
                    "cpu_seconds": time.process_time() - cpu_started,  # all threads'
                }
            )

        sample(0)
        visits = 0
        checkpoint = CHECKPOINT_SECONDS
        try:
            for new in range(1, hosts + 1):
                visits += await visit(f"host{new}.example", memory, clock)
                if rng.random() < REVISIT_SHARE:
                    visits += await visit(f"host{rng.randint(1, new)}.example", memory, clock)
                if clock.now >= checkpoint:
                    checkpoint += CHECKPOINT_SECONDS
                    changed = memory.take_dirty()
                    memory.saving(changed, writer.put(StateWrite(hosts=changed)))
                    await writer.drained()
                    memory.evict(saved_through=writer.committed)
                if new in samples:
                    sample(new)
        finally:
            tracemalloc.stop()
            writer.close()
            await writing
            await db.dispose()
    return {"capacity": capacity, "visits": visits, "rows": rows}


async def visit(host: str, memory: HostMemory, clock: Clock) -> int:
    """A visit's steps for per-host state (crawler.fetch.visit): the slot taken if the host is
    ready, the host read back if need be, robots.txt fetched if not known, the request
    ended. 1 if the host was visited, else 0."""
    polite, robots = memory.politeness, memory.robots
    if not polite.ready(host, clock.now):
        return 0
    clock.now += 1.0 / VISITS_PER_SECOND
    polite.start(host, clock.now)
    await memory.ensure(host)
    if robots.get(host, clock.wall()) is None:
        entry = robots.store(host, 200, robots_txt(host), clock.wall())
        polite.set_crawl_delay(host, robots.crawl_delay(entry))
    polite.finish(host, clock.now)
    memory.changed(host)
    return 1


def one_run(args: argparse.Namespace, capacity: int, seed: int) -> dict:
    command = [
        sys.executable,
        __file__,
        "--worker",
        "--hosts",
        str(args.hosts),
        "--capacity",
        str(capacity),
        "--seed",
        str(seed),
        "--samples",
        *map(str, args.samples),
        *(["--trace"] if args.trace else []),
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def report(results: dict[str, list[dict]]) -> None:
    print("kind        hosts  in memory  resident MB  heap MB  read back  seconds  CPU s")
    traced = any(row["heap_mb"] for runs in results.values() for row in runs[0]["rows"])
    for kind, runs in results.items():
        for i, row in enumerate(runs[0]["rows"]):
            median = {
                key: statistics.median(run["rows"][i][key] for run in runs)
                for key in (
                    "in_memory",
                    "resident_mb",
                    "heap_mb",
                    "read_back",
                    "seconds",
                    "cpu_seconds",
                )
            }
            heap = f"{median['heap_mb']:.1f}" if traced else "-"
            print(
                f"{kind:9} {row['hosts']:>7} {median['in_memory']:>10.0f} "
                f"{median['resident_mb']:>12.1f} {heap:>8} "
                f"{median['read_back']:>10.0f} {median['seconds']:>8.1f} "
                f"{median['cpu_seconds']:>6.1f}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--capacity", type=int, default=defaults.HOST_MEMORY)
    parser.add_argument("--samples", type=int, nargs="+", default=[10_000, 25_000, 50_000, 100_000])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--trace", action="store_true", help="the Python heap too (slower)")
    parser.add_argument("--out", type=Path, help="write the runs as JSON")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        result = asyncio.run(run(args.hosts, args.capacity, args.samples, args.seed, args.trace))
        print(json.dumps(result))
        return
    kinds = {"bounded": args.capacity, "unbounded": UNBOUNDED}
    results: dict[str, list[dict]] = {kind: [] for kind in kinds}
    for seed in range(args.runs):  # the two kinds interleave
        for kind, capacity in kinds.items():
            results[kind].append(one_run(args, capacity, seed))
            print(f"run {seed + 1}/{args.runs} {kind} done", file=sys.stderr)
    report(results)
    if args.out is not None:
        args.out.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
