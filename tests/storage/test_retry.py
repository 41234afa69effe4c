"""The database away for a while (`storage.retry`), on a real SQLite file that another
connection keeps locked; PostgreSQL stopped and started: tests/crawler/test_database_outage.py."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, create_engine, exc
from sqlalchemy.ext.asyncio import AsyncEngine

import storage
from storage import NewUrl, writes


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[AsyncEngine]:
    engine = storage.open_engine(f"sqlite+aiosqlite:///{tmp_path / 'crawl.db'}")
    await storage.create_schema(engine)
    yield engine
    await engine.dispose()


@pytest.fixture
def impatient(tmp_path: Path) -> Iterator[Engine]:
    """The same file through connections that give up on a lock at once (the crawl's
    wait 10 s first)."""
    engine = create_engine(f"sqlite:///{tmp_path / 'crawl.db'}", connect_args={"timeout": 0})
    yield engine
    engine.dispose()


def locked(tmp_path: Path) -> sqlite3.Connection:
    """Another connection, holding the file's write lock."""
    holder = sqlite3.connect(tmp_path / "crawl.db", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    return holder


def add_url(engine: Engine, url: str) -> None:
    with engine.begin() as connection:
        writes.add_urls(connection, [NewUrl(url, "a", 0, 1.0)])


async def test_a_write_waits_for_a_lock_another_process_holds_and_then_commits(
    db: AsyncEngine, impatient: Engine, tmp_path: Path
) -> None:
    holder = locked(tmp_path)
    retries = []
    retry = storage.DatabaseRetry(db, patience=30.0, on_retry=lambda: retries.append(1))
    writing = asyncio.create_task(
        retry.run(lambda: asyncio.to_thread(add_url, impatient, "http://a/"), doing="write to")
    )
    while retry.away is None:  # /healthz would say degraded now
        assert not writing.done()
        await asyncio.sleep(0.01)
    assert "locked" in retry.away.error
    holder.rollback()
    holder.close()
    await asyncio.wait_for(writing, 30)
    assert retries
    assert retry.away is None
    async with db.connect() as connection:
        assert [q.url async for batch in storage.iter_queued(connection) for q in batch] == [
            "http://a/"
        ]


async def test_a_lock_kept_past_the_patience_is_an_error_naming_the_file(
    db: AsyncEngine, impatient: Engine, tmp_path: Path
) -> None:
    holder = locked(tmp_path)
    retry = storage.DatabaseRetry(db, patience=0.3)
    try:
        with pytest.raises(storage.DatabaseAway) as raised:
            await retry.run(
                lambda: asyncio.to_thread(add_url, impatient, "http://a/"), doing="write to"
            )
    finally:
        holder.rollback()
        holder.close()
    message = str(raised.value)
    assert str(tmp_path / "crawl.db") in message
    assert "db_outage_seconds" in message
    assert "\n" not in message


async def test_a_write_the_database_refuses_for_good_is_not_tried_again(
    db: AsyncEngine, tmp_path: Path
) -> None:
    read_only = create_engine(
        f"sqlite:///file:{tmp_path / 'crawl.db'}?mode=ro&uri=true", connect_args={"uri": True}
    )
    retries = []
    retry = storage.DatabaseRetry(db, patience=30.0, on_retry=lambda: retries.append(1))
    try:
        with pytest.raises(exc.OperationalError, match="readonly"):
            await retry.run(
                lambda: asyncio.to_thread(add_url, read_only, "http://a/"), doing="write to"
            )
    finally:
        read_only.dispose()
    assert retries == []
    assert retry.away is None
