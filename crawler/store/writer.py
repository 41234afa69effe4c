"""The one storage writer (SQLite has one writer): results in, batched transactions out.

A fetch result and the new URLs its page links to are written in one transaction, so
a killed crawl never half-records a page. Only after the commit are the new URLs
handed back (`on_committed`), so the frontier never holds a URL the database lacks.

With WARC files kept, a batch's captures are written (in a thread) and made durable
before its transaction, which records where each page's record is and how far the file
is committed: a row never points at a record that is not on disk (crawler.store.warc_files).

Group commit: each transaction takes everything queued when it starts, so batches grow
by themselves while the database is busy, and an idle writer adds no delay (the
frontier waits for these commits, so their latency decides how fresh its choices are).
The transactions run in a thread of their own (crawler.store.write_loop), not between
the crawl's parsing and fetching; each is a function of a synchronous connection
(storage.writes), which on SQLite is that thread's own.

While the database is away (a PostgreSQL restart, a SQLite file locked by another
process) a transaction is run again whole until it commits or `db_outage_seconds` pass
(storage.retry); run twice, it writes nothing twice. Results wait in the queue meanwhile.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable

from sqlalchemy import Connection
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine

import storage
from crawler.store.records import (
    Committed,
    PageWrite,
    SitemapCommitted,
    SitemapWrite,
    StateWrite,
    WriteItem,
)
from crawler.store.warc_files import CaptureGroup, WarcArchive, Written
from crawler.store.write_loop import WriteLoop
from storage import state_writes, writes

log = logging.getLogger(__name__)

DEFAULT_BATCH_SIZE = 512  # items in one transaction, at most


class StorageWriter:
    def __init__(
        self,
        engine: AsyncEngine,
        *,
        on_committed: Callable[[list[Committed | SitemapCommitted]], None],
        batch_size: int = DEFAULT_BATCH_SIZE,
        archive: WarcArchive | None = None,
        retry: storage.DatabaseRetry | None = None,
    ) -> None:
        self.engine = engine
        # without one, a database away is an error at once
        self.retry = retry or storage.DatabaseRetry(engine, patience=0.0)
        self.on_committed = on_committed
        self.archive = archive
        self.batch_size = batch_size
        self._queue: asyncio.Queue[WriteItem | None] = asyncio.Queue()
        self._pending = 0  # items put and not yet committed
        self._put = 0  # items put, ever
        self._committed = 0  # items committed, ever: the first ones put (a queue)
        self._drained = asyncio.Event()  # set while nothing is pending
        self._drained.set()

    @property
    def pending(self) -> int:
        return self._pending

    @property
    def committed(self) -> int:
        """Items committed so far: an item is committed once this reaches its ticket."""
        return self._committed

    def put(self, item: WriteItem) -> int:
        """Queue `item`; its ticket."""
        self._pending += 1
        self._put += 1
        self._drained.clear()
        self._queue.put_nowait(item)
        return self._put

    async def drained(self) -> None:
        """Wait until everything put is committed and its callback has run."""
        await self._drained.wait()

    def close(self) -> None:
        """Write what is queued, then stop."""
        self._queue.put_nowait(None)

    async def run(self) -> None:
        self._write_loop = WriteLoop(self.engine)
        try:
            closed = False
            while not closed:
                first = await self._queue.get()
                if first is None:
                    break
                batch: list[WriteItem] = [first]
                while len(batch) < self.batch_size and not self._queue.empty():
                    item = self._queue.get_nowait()
                    if item is None:
                        closed = True
                        break
                    batch.append(item)
                await self._write(batch)
        finally:
            await self._write_loop.close()

    async def _write(self, batch: list[WriteItem]) -> None:
        pages = [item for item in batch if isinstance(item, PageWrite)]
        sitemaps = [item for item in batch if isinstance(item, SitemapWrite)]
        written = await self._archive(batch)
        records = [
            _located(page.record, written.locations[index])
            for index, page in enumerate(pages)
            if page.record is not None
        ]

        def transaction(
            connection: Connection,
        ) -> tuple[dict[str, int], list[storage.QueuedUrl], list[list[int]]]:
            writes.record_fetches(connection, records)
            # before the links: a target linked in the same batch is not queued
            dropped = writes.mark_reached(
                connection, [hop for page in pages for hop in page.reached]
            )
            new_urls = writes.add_urls(
                connection,
                [
                    *(link for page in pages for link in page.links),
                    *(link for sitemap in sitemaps for link in sitemap.links),
                ],
            )
            # after the links: a page may raise a URL an earlier page of the batch found
            raised = writes.raise_scores(
                connection, [page.raise_known for page in pages if page.raise_known]
            )
            # in the order they were put: a host's later record wins (a sitemap's
            # progress over the robots.txt record made before the host's first sitemap)
            for item in batch:
                if isinstance(item, SitemapWrite):
                    state_writes.save_hosts(connection, item.hosts)
                elif isinstance(item, StateWrite):
                    state_writes.save_hosts(connection, item.hosts)
                    state_writes.save_sources(connection, item.sources)
                    state_writes.add_timeline(connection, item.timeline)
                    for name, blob in item.learned.items():
                        state_writes.save_learned_state(connection, name, blob)
            writes.save_warc_files(connection, written.committed)
            return dropped, new_urls, raised

        try:
            # run again whole while the database is away or after a deadlock
            dropped, new_urls, raised = await self.retry.run(
                lambda: self._write_loop.run(transaction), doing="write to"
            )
        except SQLAlchemyError as error:
            # a full disk or read-only database: stop the crawl loudly, nothing is
            # half-written, and the uncommitted URLs are still queued in the database
            raise storage.StorageError(f"cannot write to the database: {error}") from error
        self._pending -= len(batch)
        self._committed += len(batch)
        self.on_committed(_attribute(pages, sitemaps, new_urls, dropped, raised))
        if self._pending == 0:
            self._drained.set()

    async def _archive(self, batch: list[WriteItem]) -> Written:
        """Write the batch's captures to the WARC file, in the order they were put;
        where each page's record went, in the order of the batch's pages."""
        pages = [item for item in batch if isinstance(item, PageWrite)]
        if self.archive is None or not any(item.captures for item in batch):
            return Written([None] * len(pages))
        revisited = [p.candidate.url_id for p in pages if any(e.status == 304 for e in p.captures)]
        earlier: dict[int, tuple[str, int]] = {}
        if revisited:  # a 304 refers to the capture the row points at
            try:
                earlier = await self.retry.run(
                    lambda: self._warc_locations(revisited), doing="read from"
                )
            except SQLAlchemyError as error:
                raise storage.StorageError(f"cannot read the database: {error}") from error
        groups: list[CaptureGroup] = []
        owners: list[int | None] = []  # each page's group
        for item in batch:
            if isinstance(item, StateWrite | SitemapWrite):  # answers no page row points at
                if item.captures:
                    groups.append(CaptureGroup(item.captures))
                continue
            owners.append(len(groups) if item.captures else None)
            if item.captures:
                groups.append(CaptureGroup(item.captures, earlier.get(item.candidate.url_id)))
        written = await asyncio.to_thread(self.archive.write, groups)
        locations = [None if at is None else written.locations[at] for at in owners]
        return Written(locations, written.committed)

    async def _warc_locations(self, url_ids: list[int]) -> dict[int, tuple[str, int]]:
        async with self.engine.connect() as connection:
            return await storage.warc_locations(connection, url_ids)


def _located(record: storage.FetchRecord, location: tuple[str, int] | None) -> storage.FetchRecord:
    if location is None:
        return record
    return dataclasses.replace(record, warc_file=location[0], warc_offset=location[1])


def _attribute(
    pages: list[PageWrite],
    sitemaps: list[SitemapWrite],
    new_urls: list[storage.QueuedUrl],
    dropped: dict[str, int],
    raised: list[list[int]],
) -> list[Committed | SitemapCommitted]:
    """Give each new URL to the first page in the batch that linked to it, else to the
    first sitemap that listed it, each dropped one to the first page that reached it,
    and each page the URLs it raised."""
    by_url = {queued.url: queued for queued in new_urls}
    raised_by = iter(raised)  # one list a page with a raise, in the batch's order
    committed: list[Committed | SitemapCommitted] = []
    for page in pages:
        mine = []
        for link in page.links:
            queued = by_url.pop(link.url, None)
            if queued is not None:
                mine.append(queued)
        gone = [dropped.pop(hop.url) for hop in page.reached if hop.url in dropped]
        lifted = next(raised_by) if page.raise_known else []
        committed.append(Committed(page, mine, gone, lifted))
    for sitemap in sitemaps:
        listed = [by_url.pop(link.url) for link in sitemap.links if link.url in by_url]
        committed.append(SitemapCommitted(sitemap, listed))
    return committed
