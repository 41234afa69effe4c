"""A transaction whose connection is lost at its commit may have committed; the writer
runs it again whole (`storage.retry`). Run twice, a crawl's writes write nothing twice."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import Connection, func, select
from sqlalchemy.ext.asyncio import AsyncEngine

import storage
from storage import NewUrl, TimelineSample, state_writes, writes
from storage.models import TimelineRow
from tests.storage.helpers import fetched


async def test_a_page_written_again_is_counted_once_and_its_redirect_still_dropped(
    engine: AsyncEngine,
) -> None:
    async with engine.begin() as connection:
        page, target = await storage.add_urls(
            connection, [NewUrl("http://a/page", "a", 0, 1.0), NewUrl("http://a/target", "a", 1, 0)]
        )
    record = fetched(page.id, fetched_at=datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC))
    sample = TimelineSample(1_767_000_000.25, {"pages": 1})

    def transaction(connection: Connection) -> dict[str, int]:
        writes.record_fetches(connection, [record])
        dropped = writes.mark_reached(connection, [NewUrl("http://a/target", "a", 1, 0)])
        state_writes.add_timeline(connection, [sample])
        return dropped

    async with engine.begin() as connection:
        first = await connection.run_sync(transaction)
    async with engine.begin() as connection:  # again, as after a lost commit's answer
        second = await connection.run_sync(transaction)
    # the frontier drops the redirect's target whichever run it hears from
    assert first == second == {"http://a/target": target.id}
    async with engine.connect() as connection:
        exported = {r.url: r async for r in storage.iter_export(connection)}
        samples = await connection.scalar(select(func.count()).select_from(TimelineRow))
    assert exported["http://a/page"].fetch_count == 1
    assert samples == 1


async def test_a_page_visited_again_later_is_counted_again(engine: AsyncEngine) -> None:
    async with engine.begin() as connection:
        (page,) = await storage.add_urls(connection, [NewUrl("http://a/page", "a", 0, 1.0)])
        await storage.record_fetches(connection, [fetched(page.id)])
        later = datetime(2026, 1, 3, tzinfo=UTC)
        await storage.record_fetches(connection, [fetched(page.id, fetched_at=later)])
    async with engine.connect() as connection:
        exported = {r.url: r async for r in storage.iter_export(connection)}
    assert exported["http://a/page"].fetch_count == 2
    assert exported["http://a/page"].fetched_at == later
