"""`crawler demo`: serve the testbed, crawl it for a few seconds, show what was found."""

from __future__ import annotations

import asyncio
import socket
import sys
import tempfile
from pathlib import Path

from prometheus_client import CollectorRegistry

import storage
from crawler.collection import status
from crawler.config import CrawlConfig
from crawler.service import run_crawl
from crawler.testbed import Testbed
from crawler.testbed_web import WebSpec

TOP_PAGES = 5


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


async def run_demo(*, duration: float, db: str | None) -> int:
    with tempfile.TemporaryDirectory(prefix="crawler-demo-") as scratch:
        db = db or f"sqlite+aiosqlite:///{Path(scratch) / 'demo.db'}"
        port = free_port()
        async with Testbed(WebSpec(pages=3000)) as bed:
            print(
                f"testbed: {bed.web.spec.pages} pages on {len(bed.base_urls)} hosts; "
                f"topic {bed.topic!r}"
            )
            print(f"metrics: http://127.0.0.1:{port}/metrics (while the demo runs)")
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
            summary = await run_crawl(config, registry=CollectorRegistry(), progress=sys.stderr)
            if sys.stderr.isatty():
                sys.stderr.write("\n")
            print(
                f"visited {summary.fetched} URLs in {summary.seconds:.1f} s; "
                f"{summary.relevant} relevant "
                f"(harvest rate {summary.relevant / max(summary.fetched, 1):.2f})"
            )
            report = await status(db)
            print(
                f"collection: {report.pages} pages, {report.relevant_pages} relevant, "
                f"{report.frontier} URLs still in the frontier"
            )
            print("most relevant pages:")
            for url, relevance, title in await _top_pages(db):
                print(f"  {relevance:.2f}  {url}  {title or ''}")
    return 0


async def _top_pages(db: str) -> list[tuple[str, float, str | None]]:
    engine = storage.open_engine(db)
    try:
        async with engine.connect() as connection:
            records = [r async for r in storage.iter_export(connection) if r.relevance is not None]
    finally:
        await engine.dispose()
    records.sort(key=lambda r: r.relevance or 0.0, reverse=True)
    return [(r.url, r.relevance or 0.0, r.title) for r in records[:TOP_PAGES]]


if __name__ == "__main__":
    asyncio.run(run_demo(duration=20.0, db=None))
