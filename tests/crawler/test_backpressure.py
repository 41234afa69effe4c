"""Backpressure: a writer that falls behind pauses dispatching instead of piling up results."""

from __future__ import annotations

import time
from collections.abc import Sequence

import pytest
from prometheus_client import CollectorRegistry
from sqlalchemy import Connection

import storage
from crawler.engine import engine
from storage import writes
from testbed.server import Testbed
from testbed.web import WebSpec
from tests.crawler.helpers import GaugeWatch, collection, crawl

BACKLOG, CONCURRENCY, BUFFER = 10, 8, 8
SECONDS_PER_RECORD = 0.01  # a writer of 100 pages a second, slower than the fetchers


async def test_a_slow_writer_holds_back_the_fetchers(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    record_fetches = writes.record_fetches

    def slow_record_fetches(
        connection: Connection, records: Sequence[storage.FetchRecord]
    ) -> None:  # on the writer's thread, which it holds up
        time.sleep(SECONDS_PER_RECORD * len(records))
        record_fetches(connection, records)

    monkeypatch.setattr(writes, "record_fetches", slow_record_fetches)
    monkeypatch.setattr(engine, "MAX_WRITE_BACKLOG", BACKLOG)
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
            concurrency=CONCURRENCY,
            per_host_concurrency=CONCURRENCY,
            buffer=BUFFER,
        )
    assert summary.fetched == 250
    assert len(await collection(db_url)) == 250  # all written in the end
    # the bound, plus what was already fetched or queued when it was reached
    assert BACKLOG <= waiting.most <= BACKLOG + CONCURRENCY + BUFFER + 1
