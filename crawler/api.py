"""The crawler as a Python library (docs/python-api.md).

    summary = await crawler.crawl(seeds, topic, db="crawl.db", on_page=print)
    summary = crawler.crawl_blocking(seeds, topic, db="crawl.db")
    async for page in crawler.stream_pages(seeds, topic, db="crawl.db"): ...
    async for page in crawler.read_pages("crawl.db"): ...

Settings are keyword arguments named as in docs/configuration.md (`max_pages=100`,
`delay=2.0`); the environment's CRAWLER_* variables are not read. A crawl run this way
installs no signal handlers and leaves the process's allocator, garbage collector and
BLAS threads as they are, unless asked (`handle_signals`, `tune_process`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import storage
from crawler.config import CrawlConfig, build_config
from crawler.reporting.collection import export_records
from crawler.service import run_crawl
from crawler.summary import CrawlSummary

__all__ = ["CrawlSummary", "Page", "crawl", "crawl_blocking", "read_pages", "stream_pages"]


@dataclass(frozen=True, slots=True)
class Page:
    """A page the crawl fetched and stored."""

    url: str  # the URL visited
    final_url: str | None  # where its redirects led, if anywhere
    title: str | None
    relevance: float | None  # 0..1 against the topic
    text: str | None  # the page's main text (None with store_text=False, or not HTML)
    status: int | None
    fetched_at: datetime | None


def make_config(seeds: Iterable[str], topic: str, *, db: str, **settings: Any) -> CrawlConfig:
    """The crawl's settings, checked as `crawler run` checks them (a ConfigError names a
    bad one)."""
    values = {"seeds": list(seeds), "topic": topic, "db": db, **settings}
    return build_config(environ={}, flag_values=values)


async def crawl(
    seeds: Iterable[str],
    topic: str,
    *,
    db: str = "crawl.db",
    on_page: Callable[[Page], object] | None = None,
    tune_process: bool = False,
    handle_signals: bool = False,
    **settings: Any,
) -> CrawlSummary:
    """Crawl from `seeds` towards `topic` until a limit, or until nothing is left; tell
    `on_page` each page once it is stored. Run again on the same `db` to resume."""
    config = make_config(seeds, topic, db=db, **settings)

    def stored(url: str, record: storage.FetchRecord) -> None:
        if on_page is not None:
            on_page(_page(url, record))

    return await run_crawl(
        config,
        handle_signals=handle_signals,
        on_stored=stored if on_page is not None else None,
        tune_process=tune_process,
    )


def crawl_blocking(seeds: Iterable[str], topic: str, **options: Any) -> CrawlSummary:
    """`crawl` for code without an event loop: runs one until the crawl ends."""
    return asyncio.run(crawl(seeds, topic, **options))


async def stream_pages(seeds: Iterable[str], topic: str, **options: Any) -> AsyncIterator[Page]:
    """Each page as it is stored, while the crawl runs. Closing the iterator stops the
    crawl (`async with contextlib.aclosing(...)` closes it on leaving the loop); what is
    stored stays, and a later crawl of the same `db` resumes."""
    pages: asyncio.Queue[Page | None] = asyncio.Queue()
    running = asyncio.create_task(crawl(seeds, topic, on_page=pages.put_nowait, **options))
    running.add_done_callback(lambda _: pages.put_nowait(None))
    try:
        while (page := await pages.get()) is not None:
            yield page
        await running  # its error, if it failed
    finally:
        if not running.done():
            running.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await running


async def read_pages(db: str, *, min_relevance: float | None = None) -> AsyncIterator[Page]:
    """The pages a crawl stored, finished or running, in the order they were found."""
    async for row in export_records(db, min_relevance, text=True):
        if row.error is None and row.fetched_at is not None:
            yield Page(
                row.url,
                row.final_url,
                row.title,
                row.relevance,
                row.text,
                row.status,
                row.fetched_at,
            )


def _page(url: str, record: storage.FetchRecord) -> Page:
    return Page(
        url,
        record.final_url,
        record.title,
        record.relevance,
        record.text,
        record.status,
        record.fetched_at,
    )
