"""The storage writer's batches: what one batch holds is written in the order it was put."""

from __future__ import annotations

import asyncio

from sqlalchemy.ext.asyncio import AsyncEngine

import storage
from crawler.store.records import SitemapWrite, StateWrite
from crawler.store.writer import StorageWriter


async def test_a_hosts_records_in_one_batch_are_saved_in_the_order_they_were_put(
    db: AsyncEngine,
) -> None:
    """A host's robots.txt record, made before its first sitemap was read, and the
    sitemap's record with the host's progress, in one batch: the later one is kept (a
    resumed crawl that lost the progress asked for the sitemap again)."""

    def record(sitemaps: str | None) -> storage.HostRecord:
        return storage.HostRecord(
            host="a.test",
            robots_status=200,
            robots_body="",
            robots_fetched_at=1.0,
            backoff=1.0,
            failures=0,
            not_before=0.0,
            sitemaps=sitemaps,
        )

    writer = StorageWriter(db, on_committed=lambda committed: None)
    progress = '{"todo": [], "files": 1, "urls": 0, "bytes": 0}'
    writer.put(StateWrite(hosts=[record(None)]))
    writer.put(SitemapWrite(hosts=[record(progress)]))
    writing = asyncio.create_task(writer.run())  # both in its first batch
    await writer.drained()
    writer.close()
    await writing
    async with db.connect() as connection:
        saved = await storage.load_host(connection, "a.test")
    assert saved is not None
    assert saved.sitemaps == progress
