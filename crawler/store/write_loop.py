"""A thread of its own where the storage writer's transactions run.

A transaction through SQLAlchemy's async drivers is a dozen round trips (cursor,
execute, fetch, close, commit), and each one resumes on the loop that awaits it. On the
crawl's loop, busy parsing pages and running visits, each trip waits a turn of that
loop: measured on the Sphinx pages of tests/data/realhtml, 12 trips of 3-8 ms, a commit
of 40-190 ms for a batch of one page. The frontier learns a page's links only at its
commit, so every URL chosen meanwhile is chosen without them. Here the trips wait on a
loop of their own, and the crawl's loop sees one: the transaction's end.

A transaction is a function of a synchronous connection (`storage.writes`). On SQLite
the thread runs it on a synchronous connection of its own, each statement a plain call:
through aiosqlite each would also be handed to aiosqlite's thread and back, which took
twice the CPU (`git show 810f12e:bench/writer_cost.py`). On PostgreSQL it runs on the async engine
through `run_sync`.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import TypeVar

from sqlalchemy import Connection, Engine
from sqlalchemy.ext.asyncio import AsyncEngine

import storage

T = TypeVar("T")


class WriteLoop:
    def __init__(self, db: AsyncEngine) -> None:
        # the same database through an engine of this thread's own (asyncpg's connections
        # belong to the loop that made them)
        url = db.url.render_as_string(hide_password=False)
        self.engine: Engine | AsyncEngine = (
            storage.open_sync_engine(url)
            if db.dialect.name == "sqlite"
            else storage.open_engine(url)
        )
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="storage-writer", daemon=True
        )
        self._thread.start()
        self._closed = False

    async def run(self, transaction: Callable[[Connection], T]) -> T:
        """Run `transaction(connection)` in one database transaction on the writer's
        thread; its result, or its error."""
        future = asyncio.run_coroutine_threadsafe(_call(transaction, self.engine), self._loop)
        return await asyncio.wrap_future(future)

    async def close(self) -> None:
        """Close the engine's connections and stop the thread."""
        if self._closed:
            return
        self._closed = True
        try:
            await asyncio.wrap_future(
                asyncio.run_coroutine_threadsafe(_dispose(self.engine), self._loop)
            )
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            await asyncio.to_thread(self._thread.join)
            self._loop.close()


async def _call(transaction: Callable[[Connection], T], engine: Engine | AsyncEngine) -> T:
    if isinstance(engine, Engine):  # plain calls: the thread is the writer's alone
        with engine.begin() as connection:
            return transaction(connection)
    async with engine.begin() as connection:
        return await connection.run_sync(transaction)


async def _dispose(engine: Engine | AsyncEngine) -> None:
    if isinstance(engine, Engine):
        engine.dispose()
    else:
        await engine.dispose()
