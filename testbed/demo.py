"""`crawler demo`: serve the testbed, crawl it for a few seconds, show what was found and
what to run next. The crawl's database stays where the demo says: `crawler-demo.db` in
the current directory, or `--db`."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

from prometheus_client import CollectorRegistry
from sqlalchemy.exc import SQLAlchemyError

import storage
from crawler.config import CrawlConfig
from crawler.counts import Counts
from crawler.service import run_crawl
from crawler.telemetry.console import Console
from testbed.server import Testbed
from testbed.web import WebSpec

TOP_PAGES = 5
DEMO_PAGES = 20_000
DEMO_DB = "crawler-demo.db"  # in the current directory, where the user finds it
TRULY_RELEVANT = 0.4  # the testbed's own relevance at which a page is on the topic


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


async def run_demo(
    *, duration: float, db: str | None, pages: int = DEMO_PAGES, console: Console | None = None
) -> int:
    db = db or DEMO_DB
    port = free_port()
    async with Testbed(WebSpec(pages=pages)) as bed:
        topic = bed.topic
        await _start_afresh(db, topic)
        print(f"testbed: {pages} pages on {len(bed.base_urls)} hosts; topic {bed.topic!r}")
        print(f"database: {db}")
        print(
            f"web page: http://127.0.0.1:{port}/ and metrics: http://127.0.0.1:{port}/metrics "
            "(while the demo runs)",
            flush=True,
        )
        config = CrawlConfig(
            seeds=tuple(bed.seeds),
            topic=bed.topic,
            allowed_domains=tuple(bed.hostnames),
            db=db,
            duration=duration,
            delay=0.05,
            concurrency=8,
            allow_private_networks=True,
            metrics_port=port,
        )
        try:
            summary = await run_crawl(config, registry=CollectorRegistry(), progress=console)
        finally:
            if console is not None:
                console.end_progress()
        counts = Counts.of(summary.outcomes, relevant=summary.relevant)
        print(
            f"crawled for {summary.seconds:.1f} s: {counts.visited} URLs visited, "
            f"{counts.pages} pages fetched, {summary.frontier} URLs left in the frontier"
        )
        print(
            f"relevant by the crawler's score: {counts.relevant} of the {counts.pages} pages "
            f"fetched (harvest rate {counts.relevant / max(counts.pages, 1):.2f})"
        )
        truly = {bed.page_url(p) for p in range(pages) if bed.web.relevance[p] >= TRULY_RELEVANT}
        scored = await _scored_pages(db)
        found = {url for url, _, _ in scored if url in truly}
        print(
            f"relevant by the testbed's ground truth: {len(found)} of its {len(truly)} pages "
            f"on the topic found, after visiting {summary.fetched / pages:.0%} of its pages"
        )
        print("most relevant pages:")
        for url, relevance, title in scored[:TOP_PAGES]:
            print(f"  {relevance:.3f}  {url}  {title or ''}")
    print(
        "next, with the crawl's database:\n"
        f"  crawler status --db {db}\n"
        f'  crawler search "{topic}" --db {db}\n'
        f"  crawler export --db {db} --out pages.jsonl\n"
        f"  crawler report --db {db} --out report.html  "
        '(pip install "topical-crawler[report]")'
    )
    return 0


async def _start_afresh(db: str, topic: str) -> None:
    """An earlier demo's database is replaced, since its testbed has gone; a file that is
    not a demo's database is left alone, and the demo refuses it."""
    url = storage.database_url(db)
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return
    path = Path(str(url.database))
    if not await asyncio.to_thread(path.exists):
        return
    if await _topic_of(db) != topic:
        raise storage.StorageError(f"{str(path)!r} is not a demo's database: give another --db")
    await asyncio.to_thread(_remove, path)


def _remove(database: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        database.with_name(database.name + suffix).unlink(missing_ok=True)


async def _topic_of(db: str) -> str | None:
    engine = storage.open_engine(db)
    try:
        async with engine.connect() as connection:
            return (await storage.get_meta(connection)).get("topic")
    except SQLAlchemyError:  # not a database, or not a crawl's
        return None
    finally:
        await engine.dispose()


async def _scored_pages(db: str) -> list[tuple[str, float, str | None]]:
    """(url after redirects, relevance, title) of every scored page, most relevant first."""
    engine = storage.open_engine(db)
    try:
        async with engine.connect() as connection:
            records = [r async for r in storage.iter_export(connection) if r.relevance is not None]
    finally:
        await engine.dispose()
    records.sort(key=lambda r: r.relevance or 0.0, reverse=True)
    return [(r.final_url or r.url, r.relevance or 0.0, r.title) for r in records]


if __name__ == "__main__":
    asyncio.run(run_demo(duration=20.0, db=None))
