"""The schema's version: an older database is brought up to date, keeping its rows; a
newer one, or one that cannot be brought up to date, is an error before anything is
written. On SQLite and on PostgreSQL."""

from __future__ import annotations

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

import storage
from storage import NewUrl, StorageError
from storage.models import SCHEMA_VERSION


async def execute(engine: AsyncEngine, *statements: str) -> None:
    async with engine.begin() as connection:
        for statement in statements:
            await connection.execute(text(statement))


async def tables(engine: AsyncEngine) -> set[str]:
    async with engine.connect() as connection:
        return set(await connection.run_sync(lambda c: c.dialect.get_table_names(c)))


async def test_a_new_database_records_the_schema_version(engine: AsyncEngine) -> None:
    async with engine.connect() as connection:
        meta = await storage.get_meta(connection)
    assert meta["schema_version"] == str(SCHEMA_VERSION)


async def test_a_database_of_an_older_version_is_brought_up_to_date_keeping_its_rows(
    engine: AsyncEngine,
) -> None:
    async with engine.begin() as connection:
        await storage.add_urls(connection, [NewUrl("http://a/", "a", 0, 1.0)])
        await storage.set_meta(connection, {"topic": "solar energy"})
    # as a version that recorded no version, had no leases and no WARC columns made it
    await execute(
        engine,
        "DELETE FROM crawl_meta WHERE key = 'schema_version'",
        "DROP TABLE host_leases",
        "ALTER TABLE urls DROP COLUMN warc_file",
    )
    await storage.create_schema(engine)
    assert "host_leases" in await tables(engine)
    async with engine.connect() as connection:
        meta = await storage.get_meta(connection)
        (queued,) = [q async for batch in storage.iter_queued(connection) for q in batch]
        await connection.execute(text("SELECT warc_file FROM urls"))
    assert meta == {"topic": "solar energy", "schema_version": str(SCHEMA_VERSION)}
    assert queued.url == "http://a/"


async def test_a_database_of_a_newer_version_is_an_error_and_is_left_as_it_is(
    engine: AsyncEngine,
) -> None:
    newer = str(SCHEMA_VERSION + 1)
    await execute(
        engine,
        f"UPDATE crawl_meta SET value = '{newer}' WHERE key = 'schema_version'",
        "DROP TABLE host_leases",
    )
    message = f"made by a newer version of the crawler \\(schema {newer}\\); this one reads"
    with pytest.raises(StorageError, match=message):
        await storage.create_schema(engine)
    assert "host_leases" not in await tables(engine)  # nothing made
    async with engine.connect() as connection:
        assert (await storage.get_meta(connection))["schema_version"] == newer


async def test_an_unreadable_schema_version_is_an_error(engine: AsyncEngine) -> None:
    await execute(engine, "UPDATE crawl_meta SET value = 'two' WHERE key = 'schema_version'")
    with pytest.raises(StorageError, match="records an unreadable schema version 'two'"):
        await storage.create_schema(engine)


async def test_a_table_lacking_a_required_column_is_an_error_naming_it(
    engine: AsyncEngine,
) -> None:
    await execute(
        engine,
        "DELETE FROM crawl_meta WHERE key = 'schema_version'",
        "ALTER TABLE urls DROP COLUMN fetch_count",
    )
    with pytest.raises(StorageError, match=r"required column urls\.fetch_count"):
        await storage.create_schema(engine)
