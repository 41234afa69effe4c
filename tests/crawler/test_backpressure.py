"""Backpressure: a writer that falls behind pauses dispatching instead of piling up results
whose links the frontier does not have yet."""

from __future__ import annotations

import time
from collections.abc import Sequence

import pytest
from prometheus_client import CollectorRegistry
from sqlalchemy import Connection

import storage
from crawler.engine import writer_hold
from storage import writes
from testbed.server import Testbed
from testbed.web import WebSpec
from tests.crawler.helpers import GaugeWatch, collection, crawl

BUFFER = 8
SECONDS_PER_RECORD = 0.01  # a writer of 100 pages a second, slower than the fetchers


@pytest.mark.parametrize("concurrency", [1, 8, 20])
async def test_a_slow_writer_holds_back_the_fetchers(
    db_url: str, monkeypatch: pytest.MonkeyPatch, concurrency: int
) -> None:
    record_fetches = writes.record_fetches

    def slow_record_fetches(
        connection: Connection, records: Sequence[storage.FetchRecord]
    ) -> None:  # on the writer's thread, which it holds up
        time.sleep(SECONDS_PER_RECORD * len(records))
        record_fetches(connection, records)

    monkeypatch.setattr(writes, "record_fetches", slow_record_fetches)
    monkeypatch.setattr(writer_hold, "MAX_WRITE_BACKLOG", 16)  # the memory's bound, reached at 20
    hold = writer_hold.write_hold(concurrency)
    assert hold == {1: writer_hold.MIN_WRITE_HOLD, 8: 8, 20: 16}[concurrency]
    registry = CollectorRegistry()
    async with (
        Testbed(WebSpec(pages=300, hosts=3, seed=2)) as bed,
        GaugeWatch("crawler_write_queue_length", registry) as waiting,
    ):
        summary = await crawl(
            db_url,
            bed.seeds,
            registry=registry,
            allowed_domains=tuple(bed.hostnames),
            max_pages=250,
            concurrency=concurrency,
            per_host_concurrency=concurrency,
            buffer=BUFFER,
        )
    assert summary.fetched == 250
    assert len(await collection(db_url)) == 250  # all written in the end
    # the hold, plus what was already fetched or queued when it was reached
    assert hold <= waiting.most <= hold + concurrency + BUFFER + 1
    held = registry.get_sample_value("crawler_dispatch_held_by_writer_seconds_total")
    assert held is not None
    assert held > 1.0  # of the 2.5 s the writer takes
