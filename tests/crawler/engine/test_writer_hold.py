"""The writer's hold: no new visit while the storage writer is behind by the visits
allowed in flight, and the time it held them counted as it passes."""

from __future__ import annotations

import asyncio

from sqlalchemy.ext.asyncio import AsyncEngine

from crawler.engine.writer_hold import MAX_WRITE_BACKLOG, MIN_WRITE_HOLD, WriterHold, write_hold
from crawler.store.records import StateWrite
from crawler.store.writer import StorageWriter
from crawler.telemetry.metrics import CrawlerMetrics
from tests.crawler.engine.helpers import sample

HELD = "crawler_dispatch_held_by_writer_seconds_total"


def test_the_hold_is_the_visits_allowed_in_flight_within_its_bounds() -> None:
    assert write_hold(1) == MIN_WRITE_HOLD  # one fetch need not wait for each commit
    assert write_hold(MIN_WRITE_HOLD + 5) == MIN_WRITE_HOLD + 5
    assert write_hold(10 * MAX_WRITE_BACKLOG) == MAX_WRITE_BACKLOG  # memory's bound


async def test_new_visits_are_held_while_the_writer_is_behind_until_it_commits(
    db: AsyncEngine, metrics: CrawlerMetrics
) -> None:
    writer = StorageWriter(db, on_committed=lambda committed: None)
    hold = WriterHold(lambda: writer.pending, limit=3, held_seconds=metrics.writer_holds)
    for _ in range(2):
        writer.put(StateWrite())
    assert not hold.holds(10.0)  # behind by less than the hold
    writer.put(StateWrite())
    assert hold.holds(10.0)
    assert hold.holds(10.5)
    writing = asyncio.create_task(writer.run())
    await writer.drained()
    assert not hold.holds(11.25)
    writer.close()
    await writing
    assert sample(metrics, HELD) == 1.25  # from the first look held to the first not


async def test_the_time_held_counts_only_while_held(metrics: CrawlerMetrics) -> None:
    pending = [5]
    hold = WriterHold(lambda: pending[0], limit=5, held_seconds=metrics.writer_holds)
    assert hold.holds(1.0)
    assert hold.holds(3.0)  # counted as it passes: a reading shows the hold so far
    assert sample(metrics, HELD) == 2.0
    pending[0] = 0
    assert not hold.holds(4.0)
    assert not hold.holds(9.0)  # not held since 4.0: nothing more
    pending[0] = 7
    assert hold.holds(20.0)
    assert hold.holds(20.5)
    assert sample(metrics, HELD) == 3.5
