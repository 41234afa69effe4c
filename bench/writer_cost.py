"""The CPU the storage writer's transactions cost on SQLite: through the writer's own
synchronous connection (`crawler.pipeline.write_loop` on SQLite) against the same
transactions through the async engine, aiosqlite (the way PostgreSQL's are run).

    python bench/writer_cost.py [--batches 1500] [--pages 8] [--links 3] [--rounds 3]

Each transaction records `--pages` fetches (with their texts) and adds `--links` new
URLs, as a batch of the writer does on the real web, where most links are known. CPU is
the process's, all threads (the writer's, aiosqlite's), a page; rounds interleave;
medians.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import Connection

import storage
from crawler.pipeline.write_loop import WriteLoop
from storage import writes

Batch = tuple[list[storage.FetchRecord], list[storage.NewUrl]]


def batches(args: argparse.Namespace) -> list[Batch]:
    now = datetime.now(UTC)
    work = []
    for batch in range(args.batches):
        records = [
            storage.FetchRecord(
                url_id=batch * args.pages + page + 1,
                final_url=None,
                status=200,
                content_type="text/html",
                content_length=27_000,
                relevance=0.01,
                title="The title of a page",
                fetched_at=now,
                error=None,
                text="words of a page " * 200,
            )
            for page in range(args.pages)
        ]
        links = [
            storage.NewUrl(
                f"http://h{batch % 8}.test/{batch}/{link}", f"h{batch % 8}.test", 2, 0.01
            )
            for link in range(args.links)
        ]
        work.append((records, links))
    return work


async def write_all(url: str, engine: str, work: list[Batch]) -> None:
    loop = WriteLoop(storage.open_engine(url))
    if engine == "async":  # the same transactions through aiosqlite, via run_sync
        loop.engine = storage.open_engine(url)
    try:
        for records, links in work:

            def transaction(
                connection: Connection,
                records: list[storage.FetchRecord] = records,
                links: list[storage.NewUrl] = links,
            ) -> list[storage.QueuedUrl]:
                writes.record_fetches(connection, records)
                return writes.add_urls(connection, links)

            await loop.run(transaction)
    finally:
        await loop.close()


def measure(engine: str, args: argparse.Namespace) -> float:
    """CPU ms a page of writing the batches to a fresh database holding their URLs."""
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "writes.db"
        url = f"sqlite+aiosqlite:///{path}"

        async def create() -> None:
            db = storage.open_engine(url)
            await storage.create_schema(db)
            await db.dispose()

        asyncio.run(create())
        with sqlite3.connect(path) as connection:
            connection.executemany(
                "INSERT INTO urls (id, url, host, depth, score, state, fetch_count) "
                "VALUES (?, ?, 'h.test', 1, 0.0, 0, 0)",
                [(i, f"http://h.test/{i}") for i in range(1, args.batches * args.pages + 1)],
            )
        work = batches(args)
        started = time.process_time()
        asyncio.run(write_all(url, engine, work))
        return (time.process_time() - started) / (args.batches * args.pages) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--batches", type=int, default=1500)
    parser.add_argument("--pages", type=int, default=8)
    parser.add_argument("--links", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    results: dict[str, list[float]] = {"sync": [], "async": []}
    for _ in range(args.rounds):
        for engine in results:
            results[engine].append(measure(engine, args))
            print(engine, round(results[engine][-1], 3), "ms of CPU a page", file=sys.stderr)
    medians = {engine: statistics.median(values) for engine, values in results.items()}
    print(
        json.dumps(
            {
                "cpu_ms_per_page": medians,
                "runs": results,
                "ratio": medians["async"] / medians["sync"],
            }
        )
    )


if __name__ == "__main__":
    main()
