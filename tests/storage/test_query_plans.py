"""The writes that look URLs up by address use the URL's unique index on SQLite, however
many URLs a statement names: never the (state, ...) indexes, through which a look-up
reads every queued URL (SQLite plans without statistics)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from sqlalchemy import event

import storage
from storage import NewUrl, ScoreRaise

URLS = [f"http://a.test/{n}" for n in range(50)]


async def test_look_ups_by_address_read_the_urls_index_not_the_queue(tmp_path: Path) -> None:
    path = tmp_path / "crawl.db"
    engine = storage.open_engine(f"sqlite+aiosqlite:///{path}")
    statements: list[tuple[str, Any]] = []

    def capture(_conn: Any, _cursor: Any, statement: str, parameters: Any, _c: Any, many: bool):
        statements.append((statement, parameters[0] if many else parameters))

    try:
        await storage.create_schema(engine)
        async with engine.begin() as connection:
            await storage.add_urls(connection, [NewUrl(url, "a.test", 1, 0.1) for url in URLS])
            event.listen(connection.sync_connection, "before_cursor_execute", capture)
            await storage.raise_scores(connection, [ScoreRaise(tuple(URLS[:20]), 0.5)])
            await storage.mark_reached(
                connection, [NewUrl(url, "a.test", 1, 0.0) for url in URLS[20:30]]
            )
    finally:
        await engine.dispose()

    lookups = [(sql, params) for sql, params in statements if " IN (" in sql]
    assert len(lookups) == 2  # the raise's and the redirect targets'
    with sqlite3.connect(path) as raw:
        for sql, params in lookups:
            plan = [row[-1] for row in raw.execute(f"EXPLAIN QUERY PLAN {sql}", params)]
            on_urls = [step for step in plan if " urls " in f"{step} "]
            assert on_urls, plan
            assert all("sqlite_autoindex_urls_1 (url=?)" in step for step in on_urls), (sql, plan)


async def test_the_pages_worth_labelling_are_read_through_the_relevance_index(
    tmp_path: Path,
) -> None:
    """uncertain_pages reads the pages nearest the threshold from each side of it, in the
    order of an index of the fetched pages' relevance, never every page: at 100,000
    pages a scan took 46 ms, the index's reads 4."""
    path = tmp_path / "crawl.db"
    engine = storage.open_engine(f"sqlite+aiosqlite:///{path}")
    statements: list[tuple[str, Any]] = []

    def capture(_conn: Any, _cursor: Any, statement: str, parameters: Any, _c: Any, many: bool):
        statements.append((statement, parameters))

    try:
        await storage.create_schema(engine)
        event.listen(engine.sync_engine, "before_cursor_execute", capture)
        await storage.uncertain_pages(engine, 5)
    finally:
        await engine.dispose()

    reads = [(sql, params) for sql, params in statements if "FROM urls" in sql]
    assert reads
    with sqlite3.connect(path) as raw:
        for sql, params in reads:
            plan = [row[-1] for row in raw.execute(f"EXPLAIN QUERY PLAN {sql}", params)]
            on_urls = [step for step in plan if " urls " in f"{step} " or "AS u " in step]
            assert on_urls, plan
            assert all("ix_urls_relevance" in step for step in on_urls), (sql, plan)
