"""The storage writer's transactions run in a thread of their own, against the same
database file (on SQLite through a synchronous connection of that thread's own), and
come back to the crawl's loop once each."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest
from sqlalchemy import Connection, text

import storage
from crawler.store.write_loop import WriteLoop
from storage import writes


async def test_a_transaction_runs_on_the_writers_thread_against_the_same_database(
    tmp_path: Path,
) -> None:
    db = storage.open_engine(f"sqlite+aiosqlite:///{tmp_path / 'crawl.db'}")
    await storage.create_schema(db)
    loop = WriteLoop(db)
    ran_on: list[str] = []

    def add(connection: Connection) -> list[storage.QueuedUrl]:
        ran_on.append(threading.current_thread().name)
        assert isinstance(connection.connection.dbapi_connection, sqlite3.Connection)
        return writes.add_urls(connection, [storage.NewUrl("http://a.test/", "a.test", 0, 0.5)])

    try:
        added = await loop.run(add)
    finally:
        await loop.close()
        await db.dispose()
    assert ran_on == ["storage-writer"]
    assert [queued.url for queued in added] == ["http://a.test/"]
    reader = storage.open_engine(f"sqlite+aiosqlite:///{tmp_path / 'crawl.db'}")
    async with reader.connect() as connection:
        assert await storage.is_known_done(connection, "http://a.test/") is False
        count = await connection.scalar(text("SELECT count(*) FROM urls"))
    await reader.dispose()
    assert count == 1


async def test_a_failing_transaction_raises_its_error_in_the_caller(tmp_path: Path) -> None:
    db = storage.open_engine(f"sqlite+aiosqlite:///{tmp_path / 'crawl.db'}")
    loop = WriteLoop(db)

    def fail(connection: Connection) -> None:
        connection.execute(text("SELECT * FROM no_such_table"))

    try:
        with pytest.raises(Exception, match="no_such_table"):
            await loop.run(fail)
    finally:
        await loop.close()
        await db.dispose()


async def test_closing_stops_the_thread(tmp_path: Path) -> None:
    db = storage.open_engine(f"sqlite+aiosqlite:///{tmp_path / 'crawl.db'}")
    before = set(threading.enumerate())
    loop = WriteLoop(db)
    started = [thread for thread in threading.enumerate() if thread not in before]
    assert [thread.name for thread in started] == ["storage-writer"]
    await loop.close()
    await loop.close()  # twice is harmless
    await db.dispose()
    assert not started[0].is_alive()
