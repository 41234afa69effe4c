"""What a refill of the frontier costs on a large crawl database (e.g. a soak's, kept
with `python bench/soak.py --db soak.db`): wall and CPU seconds (the database thread's
included) and resident memory, for a refill of an empty memory and of a half-empty one.
Refills only read the database.

    python bench/refill_cost.py soak.db [--capacity 50000] [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from pathlib import Path

from sqlalchemy.ext.asyncio import AsyncEngine

import storage
from crawler.pipeline.frontier_store import BoundedFrontier
from policies import BestFirst


def resident_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096 / 2**20


async def timed_refill(frontier: BoundedFrontier, db: AsyncEngine) -> tuple[int, float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    loaded = await frontier.refill(db)
    return loaded, time.perf_counter() - wall, time.process_time() - cpu


async def main(path: Path, capacity: int, runs: int) -> None:
    db = storage.open_engine(f"sqlite+aiosqlite:///{path}")
    try:
        async with db.connect() as connection:
            by_host = await storage.count_queued_by_host(connection)
        print(f"{sum(by_host.values())} URLs queued, {len(by_host)} hosts")
        results: dict[str, list[float]] = {"full": [], "half": []}
        for _ in range(runs):
            frontier = BoundedFrontier(BestFirst(), capacity=capacity)
            frontier.spill_count(by_host)
            loaded, wall, cpu = await timed_refill(frontier, db)
            results["full"].append(cpu)
            print(f"empty memory: {loaded} loaded in {wall:.2f} s, {cpu:.2f} CPU s", end="")
            print(f", resident {resident_mb():.0f} MB")
            for _ in range(capacity // 2 + 1):  # half of it fetched, as in a crawl
                frontier.pop(lambda host: True)
            loaded, wall, cpu = await timed_refill(frontier, db)
            results["half"].append(cpu)
            print(f"half empty:   {loaded} loaded in {wall:.2f} s, {cpu:.2f} CPU s", end="")
            print(f", resident {resident_mb():.0f} MB")
        for name, cpus in results.items():
            print(f"median CPU s, {name}: {statistics.median(cpus):.2f}")
    finally:
        await db.dispose()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("db", type=Path, help="a crawl's SQLite file")
    parser.add_argument("--capacity", type=int, default=50_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    if not args.db.is_file():
        parser.error(f"no database at {args.db}")
    asyncio.run(main(args.db, args.capacity, args.runs))
