"""Which URLs a redirect may still lead to: memory for those under way and those this
process stored lately, a real SQLite collection for the rest (its statements counted)."""

from __future__ import annotations

from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine

import storage
from crawler.fetch.fetched_urls import FetchedUrls
from storage import NewUrl
from tests.storage.helpers import fetched


def count_statements(db: AsyncEngine) -> list[str]:
    statements: list[str] = []
    event.listen(
        db.sync_engine,
        "before_cursor_execute",
        lambda connection, cursor, statement, *rest: statements.append(statement),
    )
    return statements


async def store_done(db: AsyncEngine, url: str) -> None:
    async with db.begin() as connection:
        [queued] = await storage.add_urls(connection, [NewUrl(url, "a.test", 0, 0.5)])
        await storage.record_fetches(connection, [fetched(queued.id)])


async def test_a_url_stored_here_is_refused_from_memory_and_others_by_the_database(
    tmp_path,
) -> None:
    db = storage.open_engine(f"sqlite+aiosqlite:///{tmp_path / 'c.db'}")
    try:
        await storage.create_schema(db)
        await store_done(db, "http://a.test/elsewhere")  # stored, but not by this process
        urls = FetchedUrls(db, memory=2)
        statements = count_statements(db)

        urls.begin("http://a.test/page")
        urls.stored(["http://a.test/page", "http://a.test/target"])  # a visit and its hop
        assert "http://a.test/page" not in urls  # no longer under way
        assert not await urls.claim("http://a.test/page")
        assert not await urls.claim("http://a.test/target")
        assert statements == []  # memory answered

        assert not await urls.claim("http://a.test/elsewhere")
        assert await urls.claim("http://a.test/new")
        assert len(statements) == 2  # the database answered each

        # a memory of two a generation forgets the oldest as it fills
        urls.stored([f"http://a.test/later/{i}" for i in range(4)])
        assert await urls.claim("http://a.test/page")  # not in the database: free
        assert len(statements) == 3
    finally:
        await db.dispose()
