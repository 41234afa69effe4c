"""`crawler demo`: serve the testbed, crawl it for a few seconds, show what was found."""

from __future__ import annotations

import asyncio
import socket
import sys
import tempfile
from pathlib import Path

from prometheus_client import CollectorRegistry

import storage
from crawler.config import CrawlConfig
from crawler.reporting.collection import status
from crawler.service import run_crawl
from testbed.server import Testbed
from testbed.web import WebSpec

TOP_PAGES = 5
DEMO_PAGES = 20_000
TRULY_RELEVANT = 0.4  # the testbed's own relevance at which a page is on the topic


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


async def run_demo(*, duration: float, db: str | None) -> int:
    with tempfile.TemporaryDirectory(prefix="crawler-demo-") as scratch:
        db = db or f"sqlite+aiosqlite:///{Path(scratch) / 'demo.db'}"
        port = free_port()
        async with Testbed(WebSpec(pages=DEMO_PAGES)) as bed:
            print(f"testbed: {DEMO_PAGES} pages on {len(bed.base_urls)} hosts; topic {bed.topic!r}")
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
            truly = {
                bed.page_url(p) for p in range(DEMO_PAGES) if bed.web.relevance[p] >= TRULY_RELEVANT
            }
            pages = await _scored_pages(db)
            found = {url for url, _, _ in pages if url in truly}
            print(
                f"ground truth: {len(found)} of the testbed's {len(truly)} pages on the topic "
                f"found, after visiting {summary.fetched / DEMO_PAGES:.0%} of its pages"
            )
            print("most relevant pages:")
            for url, relevance, title in pages[:TOP_PAGES]:
                print(f"  {relevance:.2f}  {url}  {title or ''}")
    return 0


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
