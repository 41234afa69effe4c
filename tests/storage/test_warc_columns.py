"""Where each URL's capture is in the WARC files, and how much of each file is committed."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy.ext.asyncio import AsyncEngine

import storage
from storage import NewUrl
from tests.storage.helpers import fetched


async def test_a_row_knows_where_its_capture_is_and_keeps_it_when_a_visit_captures_nothing(
    engine: AsyncEngine,
) -> None:
    big = 5 * 2**30  # offsets past 32 bits: files of several gigabytes
    async with engine.begin() as connection:
        queued = await storage.add_urls(
            connection, [NewUrl(f"http://a/{i}", "a", 0, 0) for i in (0, 1)]
        )
        await storage.record_fetches(
            connection,
            [
                fetched(queued[0].id, warc_file="c-1.warc.gz", warc_offset=big),
                fetched(queued[1].id),
            ],
        )
        # a re-visit that timed out: its outcome is recorded, the capture's place stays
        later = datetime(2026, 1, 3, tzinfo=UTC)
        await storage.record_fetches(
            connection, [fetched(queued[0].id, error="timeout", fetched_at=later)]
        )
    async with engine.connect() as connection:
        exported = {r.url: r async for r in storage.iter_export(connection)}
        located = await storage.warc_locations(connection, [q.id for q in queued])
    assert (exported["http://a/0"].warc_file, exported["http://a/0"].warc_offset) == (
        "c-1.warc.gz",
        big,
    )
    assert exported["http://a/0"].error == "timeout"
    assert (exported["http://a/1"].warc_file, exported["http://a/1"].warc_offset) == (None, None)
    assert located == {queued[0].id: ("c-1.warc.gz", big)}


async def test_committed_bytes_of_each_warc_file_are_kept_and_replaced(engine: AsyncEngine) -> None:
    async with engine.begin() as connection:
        await storage.save_warc_files(connection, {"a.warc.gz": 100, "b.warc.gz": 7})
    async with engine.begin() as connection:
        await storage.save_warc_files(connection, {"a.warc.gz": 250})
    async with engine.connect() as connection:
        assert await storage.load_warc_files(connection) == {"a.warc.gz": 250, "b.warc.gz": 7}


async def test_a_database_made_before_the_warc_columns_gains_them(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as connection:  # the urls table as it was made before
        connection.execute(
            "CREATE TABLE urls (id INTEGER PRIMARY KEY, url TEXT UNIQUE, host VARCHAR(300), "
            "depth INTEGER, discovered_from TEXT, score FLOAT, state SMALLINT, final_url TEXT, "
            "status INTEGER, content_type VARCHAR(200), content_length INTEGER, relevance FLOAT, "
            "title TEXT, fetched_at DATETIME, fetch_count INTEGER, error VARCHAR(40))"
        )
        connection.execute(
            "INSERT INTO urls (url, host, depth, score, state, fetch_count) "
            "VALUES ('http://a/', 'a', 0, 1.0, 0, 0)"
        )
    engine = storage.open_engine(f"sqlite+aiosqlite:///{path}")
    try:
        await storage.create_schema(engine)
        await storage.create_schema(engine)  # and again: nothing left to add
        async with engine.begin() as connection:
            (queued,) = [q async for batch in storage.iter_queued(connection) for q in batch]
            await storage.record_fetches(
                connection, [fetched(queued.id, warc_file="x.warc.gz", warc_offset=0)]
            )
        async with engine.connect() as connection:
            (record,) = [r async for r in storage.iter_export(connection)]
    finally:
        await engine.dispose()
    assert (record.url, record.warc_file, record.warc_offset) == ("http://a/", "x.warc.gz", 0)
