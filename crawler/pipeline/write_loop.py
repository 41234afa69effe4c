"""A thread with an event loop and a database engine of its own, where the storage
writer's transactions run.

A transaction through SQLAlchemy's async drivers is a dozen round trips (cursor,
execute, fetch, close, commit), and each one resumes on the loop that awaits it. On the
crawl's loop, busy parsing pages and running visits, each trip waits a turn of that
loop: measured on the Sphinx pages of tests/data/realhtml, 12 trips of 3-8 ms, a commit
of 40-190 ms for a batch of one page. The frontier learns a page's links only at its
commit, so every URL chosen meanwhile is chosen without them. Here the trips wait on an
idle loop, and the crawl's loop sees one: the transaction's end.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from typing import TypeVar

from sqlalchemy.ext.asyncio import AsyncEngine

import storage

T = TypeVar("T")


class WriteLoop:
    def __init__(self, db: AsyncEngine) -> None:
        # the same database through an engine of this loop's own (asyncpg's connections
        # belong to the loop that made them)
        self.engine = storage.open_engine(db.url.render_as_string(hide_password=False))
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="storage-writer", daemon=True
        )
        self._thread.start()
        self._closed = False

    async def run(self, transaction: Callable[[AsyncEngine], Awaitable[T]]) -> T:
        """Run `transaction(engine)` on the writer's loop; its result, or its error."""
        future = asyncio.run_coroutine_threadsafe(_call(transaction, self.engine), self._loop)
        return await asyncio.wrap_future(future)

    async def close(self) -> None:
        """Close the engine's connections and stop the thread."""
        if self._closed:
            return
        self._closed = True
        try:
            await self.run(lambda engine: engine.dispose())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            await asyncio.to_thread(self._thread.join)
            self._loop.close()


async def _call(transaction: Callable[[AsyncEngine], Awaitable[T]], engine: AsyncEngine) -> T:
    return await transaction(engine)
