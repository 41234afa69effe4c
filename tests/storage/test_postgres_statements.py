"""What a crawl's PostgreSQL connections leave in the server (storage.database): not the
plans of its batches, each batch size a statement of its own, read from the server
process's own memory contexts."""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

import storage
from storage import NewUrl

MEMORY = text("SELECT sum(total_bytes) FROM pg_backend_memory_contexts")


async def server_growth_mb(engine: AsyncEngine) -> float:
    """What one connection's server process gains over 150 batches of 101 to 250 URLs."""
    await storage.create_schema(engine)
    added = 0
    async with engine.connect() as connection:
        before = await connection.scalar(MEMORY)
        await connection.commit()
        for size in range(101, 251):  # the links a batch of pages makes known
            urls = [NewUrl(f"http://a.test/{added + i}", "a.test", 1, 0.5) for i in range(size)]
            assert len(await storage.add_urls(connection, urls)) == size
            await connection.commit()
            added += size
        after = await connection.scalar(MEMORY)
    await engine.dispose()
    return (after - before) / 2**20


async def test_batches_of_every_size_leave_no_plans_in_the_server(postgres_url: str) -> None:
    assert await server_growth_mb(storage.open_engine(postgres_url)) < 10


async def test_with_sqlalchemys_cache_the_plans_stay(postgres_url: str) -> None:
    # the cache's 100 statements: the last 100 batch sizes' plans
    assert await server_growth_mb(create_async_engine(postgres_url)) > 50
