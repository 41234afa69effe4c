"""What a refill of the frontier costs on a large crawl database (e.g. a soak's, kept
with `python bench/soak.py --db soak.db`): wall and CPU seconds (the database thread's
included), rows read, how long the event loop was kept from running meanwhile (the
sum, and the longest, of a millisecond heartbeat's delays: a crawl dispatches nothing
while the loop is held) and resident memory, for a refill of an empty memory and of a
half-empty one. Refills only read the database.

    python bench/refill_cost.py soak.db [--capacity 50000] [--runs 3] [--policy best-first]

With `--policy qlearning` (untrained) every queued URL is read with what its parent's
fetch showed and the policy values it, as a Q-learning crawl's refills do.

Without a crawl's database, `--queue N --hosts H` first writes one of N queued URLs
with random scores, spread evenly over H hosts, or with `--skewed` host k's share
falling as exp(-0.15 k), the last host taking the tail (over 50 hosts the first holds
14%, the 30th 0.2%):

    python bench/refill_cost.py /tmp/queue.db --queue 600000 --hosts 6 --capacity 100000
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import time
from pathlib import Path

from sqlalchemy.ext.asyncio import AsyncEngine

import storage
from crawler.pipeline import frontier_store
from crawler.pipeline.frontier_store import BoundedFrontier
from policies import make_frontier_policy

ROWS_READ = [0]
SKEW = 0.15  # --skewed: the rate at which a host's share falls with its number
TICK = 0.001  # seconds between the heartbeat's wake-ups


def count_rows_read() -> None:
    """Count the rows the refills read, at the storage functions they call."""
    by_share, with_parents = storage.queued_by_share, storage.queued_with_parents

    async def counted_by_share(*args, **kwargs):  # type: ignore[no-untyped-def]
        async for batch in by_share(*args, **kwargs):
            ROWS_READ[0] += len(batch)
            yield batch

    async def counted_with_parents(*args, **kwargs):  # type: ignore[no-untyped-def]
        batch = await with_parents(*args, **kwargs)
        ROWS_READ[0] += len(batch)
        return batch

    frontier_store.storage.queued_by_share = counted_by_share  # type: ignore[attr-defined]
    frontier_store.storage.queued_with_parents = counted_with_parents  # type: ignore[attr-defined]


async def write_queue(path: Path, queued: int, hosts: int, skewed: bool) -> None:
    db = storage.open_engine(f"sqlite+aiosqlite:///{path}")
    await storage.create_schema(db)
    rng = random.Random(0)
    try:
        for start in range(0, queued, 50_000):
            rows = []
            for i in range(start, min(start + 50_000, queued)):
                host = min(int(rng.expovariate(SKEW)), hosts - 1) if skewed else i % hosts
                rows.append(
                    storage.NewUrl(f"http://h{host}.test/{i}", f"h{host}.test", 2, rng.random())
                )
            async with db.begin() as connection:
                await storage.add_urls(connection, rows)
    finally:
        await db.dispose()


def resident_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096 / 2**20


async def heartbeat(stalls: list[float]) -> None:
    """Wake every millisecond and record how late each wake-up came: how long the
    refill kept the event loop (and so the crawl's dispatching) from running."""
    loop = asyncio.get_running_loop()
    while True:
        due = loop.time() + TICK
        await asyncio.sleep(TICK)
        stalls.append(max(loop.time() - due, 0.0))


async def timed_refill(
    frontier: BoundedFrontier, db: AsyncEngine
) -> tuple[int, float, float, list[float]]:
    """(URLs loaded, wall seconds, CPU seconds, the event loop's stalls in seconds)."""
    stalls: list[float] = []
    beating = asyncio.create_task(heartbeat(stalls))
    wall, cpu, ROWS_READ[0] = time.perf_counter(), time.process_time(), 0
    loaded = await frontier.refill(db)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    beating.cancel()
    return loaded, wall, cpu, stalls


def report(loaded: int, wall: float, cpu: float, stalls: list[float]) -> str:
    held, longest = sum(stalls), max(stalls, default=0.0)
    return (
        f"{loaded} loaded in {wall:.2f} s, {cpu:.2f} CPU s, {ROWS_READ[0]} rows read, "
        f"event loop held {held:.2f} s (longest {1000 * longest:.0f} ms), "
        f"resident {resident_mb():.0f} MB"
    )


async def main(path: Path, capacity: int, runs: int, policy: str) -> None:
    db = storage.open_engine(f"sqlite+aiosqlite:///{path}")
    try:
        async with db.connect() as connection:
            by_host = await storage.count_queued_by_host(connection)
        print(f"{sum(by_host.values())} URLs queued, {len(by_host)} hosts")
        results: dict[str, list[float]] = {"full": [], "half": []}
        for _ in range(runs):
            frontier = BoundedFrontier(make_frontier_policy(policy), capacity=capacity)
            frontier.spill_count(by_host)
            loaded, wall, cpu, stalls = await timed_refill(frontier, db)
            results["full"].append(cpu)
            print("empty memory:", report(loaded, wall, cpu, stalls))
            for _ in range(capacity // 2 + 1):  # half of it fetched, as in a crawl
                frontier.pop(lambda host: True)
            loaded, wall, cpu, stalls = await timed_refill(frontier, db)
            results["half"].append(cpu)
            print("half empty:  ", report(loaded, wall, cpu, stalls))
        for name, cpus in results.items():
            print(f"median CPU s, {name}: {statistics.median(cpus):.2f}")
    finally:
        await db.dispose()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("db", type=Path, help="a crawl's SQLite file")
    parser.add_argument("--capacity", type=int, default=50_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--queue", type=int, help="first write a database of this many URLs")
    parser.add_argument("--hosts", type=int, default=6, help="with --queue")
    parser.add_argument("--skewed", action="store_true", help="with --queue")
    parser.add_argument("--policy", default="best-first", help="the frontier's policy")
    args = parser.parse_args()
    if args.queue is not None:
        if args.db.exists():
            parser.error(f"{args.db} exists: --queue writes a new database")
        if args.queue < 1 or args.hosts < 1:
            parser.error("--queue and --hosts must be at least 1")
        asyncio.run(write_queue(args.db, args.queue, args.hosts, args.skewed))
    if not args.db.is_file():
        parser.error(f"no database at {args.db}")
    count_rows_read()
    asyncio.run(main(args.db, args.capacity, args.runs, args.policy))
