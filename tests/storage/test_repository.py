from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

import storage
from storage import HostRecord, NewUrl, writes
from storage.models import SCHEMA_VERSION
from tests.storage.helpers import fetched


async def test_add_urls_returns_only_the_urls_that_were_new(engine: AsyncEngine) -> None:
    async with engine.begin() as connection:
        first = await storage.add_urls(
            connection, [NewUrl("http://a/1", "a", 0, 1.0), NewUrl("http://a/2", "a", 1, 0.5)]
        )
        again = await storage.add_urls(
            connection,
            [NewUrl("http://a/2", "a", 3, 0.1), NewUrl("http://b/", "b", 1, 0.2, "http://a/1")],
        )
    assert [q.url for q in first] == ["http://a/1", "http://a/2"]
    assert [(q.url, q.host, q.depth) for q in again] == [("http://b/", "b", 1)]


async def test_recording_a_fetch_takes_the_url_out_of_the_frontier(engine: AsyncEngine) -> None:
    async with engine.begin() as connection:
        queued = await storage.add_urls(
            connection, [NewUrl(f"http://a/{i}", "a", 0, 0.0) for i in range(3)]
        )
        await storage.record_fetches(connection, [fetched(queued[1].id, text="hello " * 100)])
    async with engine.connect() as connection:
        frontier = [q.url async for batch in storage.iter_queued(connection) for q in batch]
        exported = [r async for r in storage.iter_export(connection)]
        text = await storage.page_text(connection, "http://a/1")
    assert frontier == ["http://a/0", "http://a/2"]
    assert [r.url for r in exported] == ["http://a/1"]
    assert exported[0].fetch_count == 1
    assert exported[0].fetched_at == datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)
    assert text == "hello " * 100


async def test_a_redirect_target_is_known_and_done_and_leaves_the_frontier(
    engine: AsyncEngine,
) -> None:
    async with engine.begin() as connection:
        queued = await storage.add_urls(
            connection,
            [NewUrl("http://a/queued", "a", 1, 0.5), NewUrl("http://a/other", "a", 1, 0)],
        )
        reached = [NewUrl("http://a/queued", "a", 2, 0), NewUrl("http://b/new", "b", 2, 0)]
        dropped = await storage.mark_reached(connection, reached)
        linked_later = await storage.add_urls(connection, [NewUrl("http://b/new", "b", 3, 0.9)])
    assert dropped == {"http://a/queued": queued[0].id}  # the frontier drops it
    assert linked_later == []  # never queued
    async with engine.connect() as connection:
        frontier = [q.url async for batch in storage.iter_queued(connection) for q in batch]
        exported = [r.url async for r in storage.iter_export(connection)]
        known = [
            await storage.is_known_done(connection, u) for u in ("http://b/new", "http://a/other")
        ]
    assert frontier == ["http://a/other"]
    assert exported == []  # the page is on the redirecting URL's row
    assert known == [True, False]


async def test_fetching_again_counts_and_replaces(engine: AsyncEngine) -> None:
    async with engine.begin() as connection:
        (queued,) = await storage.add_urls(connection, [NewUrl("http://a/", "a", 0, 0.0)])
        await storage.record_fetches(connection, [fetched(queued.id, title="old", text="old")])
        later = datetime(2026, 1, 3, tzinfo=UTC)  # a visit of its own, not the first again
        await storage.record_fetches(
            connection, [fetched(queued.id, title="new", text="new", fetched_at=later)]
        )
    async with engine.connect() as connection:
        (record,) = [r async for r in storage.iter_export(connection)]
        assert await storage.page_text(connection, "http://a/") == "new"
    assert (record.title, record.fetch_count) == ("new", 2)


async def test_frontier_is_read_back_in_batches(engine: AsyncEngine) -> None:
    async with engine.begin() as connection:
        await storage.add_urls(
            connection, [NewUrl(f"http://a/{i}", "a", 0, 0.0) for i in range(25)]
        )
    async with engine.connect() as connection:
        batches = [batch async for batch in storage.iter_queued(connection, batch_size=10)]
    assert [len(b) for b in batches] == [10, 10, 5]
    assert len({q.id for b in batches for q in b}) == 25


async def read_by_share(
    connection: AsyncConnection, *, by_score: bool, share: int, batch_size: int
) -> list[list[storage.QueuedUrl]]:
    ranked = storage.queued_by_share(
        connection, by_score=by_score, share=share, batch_size=batch_size
    )
    return [batch async for batch in ranked]


async def test_the_frontier_is_read_back_by_score_then_shallowest_first(
    engine: AsyncEngine,
) -> None:
    async with engine.begin() as connection:
        deep = [NewUrl(f"http://a/deep/{i}", "a", 2, 0.0) for i in range(30)]
        shallow = [NewUrl(f"http://a/{i}", "a", 1, 0.0) for i in range(5)]
        best = [NewUrl("http://a/best", "a", 3, 0.5)]
        await storage.add_urls(connection, deep + shallow + best)
    async with engine.connect() as connection:
        [at_once] = await read_by_share(connection, by_score=True, share=100, batch_size=100)
        in_batches = await read_by_share(connection, by_score=True, share=100, batch_size=4)
        by_depth = await read_by_share(connection, by_score=False, share=100, batch_size=100)
    assert [q.depth for q in at_once] == [3] + [1] * 5 + [2] * 30
    assert [len(batch) for batch in in_batches] == [4] * 9
    assert [q for batch in in_batches for q in batch] == at_once
    assert [q.depth for q in by_depth[0]] == [1] * 5 + [2] * 30 + [3]


async def test_each_hosts_best_come_first_then_the_rest_in_order(engine: AsyncEngine) -> None:
    async with engine.begin() as connection:
        urls = [NewUrl(f"http://a/{i}", "a", 1, 0.9 - i / 100) for i in range(5)]
        urls += [NewUrl(f"http://b/{i}", "b", 1, 0.5 - i / 100) for i in range(3)]
        await storage.add_urls(connection, urls)
    async with engine.connect() as connection:
        [ranked] = await read_by_share(connection, by_score=True, share=2, batch_size=10)
    assert [q.url.removeprefix("http://") for q in ranked] == [
        *("a/0", "a/1", "b/0", "b/1"),  # each host's best two, in the order
        *("a/2", "a/3", "a/4", "b/2"),  # then the rest, in the order
    ]


async def test_hosts_learned_state_and_meta_round_trip(engine: AsyncEngine) -> None:
    hosts = [HostRecord("a", 200, "User-agent: *", 1.5, 4.0, 2, 99.0), HostRecord("b")]
    async with engine.begin() as connection:
        await storage.save_hosts(connection, hosts)
        await storage.save_hosts(connection, [HostRecord("b", backoff=8.0)])
        await storage.save_learned_state(connection, "model", b"\x00\x01")
        await storage.save_learned_state(connection, "model", b"\x02")
        await storage.set_meta(connection, {"topic": "solar"})
    async with engine.connect() as connection:
        loaded = {h.host: h for h in await storage.load_hosts(connection)}
        assert await storage.load_learned_state(connection, "model") == b"\x02"
        assert await storage.load_learned_state(connection, "missing") is None
        meta = await storage.get_meta(connection)
        assert meta == {"topic": "solar", "schema_version": str(SCHEMA_VERSION)}
    assert loaded["a"] == hosts[0]
    assert loaded["b"].backoff == 8.0


async def test_one_host_or_only_the_closed_ones_are_read_back(engine: AsyncEngine) -> None:
    hosts = [HostRecord(f"h{i}", not_before=float(i)) for i in range(10)]
    async with engine.begin() as connection:
        await storage.save_hosts(connection, hosts)
    async with engine.connect() as connection:
        assert await storage.load_host(connection, "h3") == hosts[3]
        assert await storage.load_host(connection, "nowhere") is None
        closed = await storage.load_hosts(connection, closed_after=7.0)
        names = [batch async for batch in storage.iter_host_names(connection, batch_size=4)]
    assert sorted(h.host for h in closed) == ["h8", "h9"]
    assert [len(batch) for batch in names] == [4, 4, 2]
    assert sorted(name for batch in names for name in batch) == sorted(h.host for h in hosts)


async def test_status_counts_pages_relevance_and_errors(engine: AsyncEngine) -> None:
    async with engine.begin() as connection:
        queued = await storage.add_urls(
            connection, [NewUrl(f"http://h{i % 2}/{i}", f"h{i % 2}", 0, 0.0) for i in range(6)]
        )
        await storage.record_fetches(
            connection,
            [
                fetched(queued[0].id, relevance=0.9),
                fetched(queued[1].id, relevance=0.05),
                fetched(queued[2].id, relevance=None, status=None, error="timeout"),
                fetched(queued[3].id, relevance=None, status=None, error="timeout"),
                fetched(queued[4].id, relevance=None, status=None, error="robots"),
            ],
        )
    async with engine.connect() as connection:
        report = await storage.crawl_status(connection, relevance_threshold=0.1)
        relevant = [r.url async for r in storage.iter_export(connection, min_relevance=0.1)]
    assert (report.pages, report.relevant_pages, report.frontier, report.hosts) == (2, 1, 1, 2)
    assert report.errors == {"timeout": 2, "robots": 1}
    assert relevant == ["http://h0/0"]


async def test_a_reader_sees_committed_rows_while_a_writer_holds_a_transaction(
    engine: AsyncEngine,
) -> None:
    async with engine.begin() as connection:
        await storage.add_urls(connection, [NewUrl("http://a/", "a", 0, 0.0)])
    async with engine.begin() as writer:
        await storage.add_urls(writer, [NewUrl("http://a/x", "a", 0, 0.0)])
        reader_engine = storage.open_engine(str(engine.url))
        async with reader_engine.connect() as reader:
            report = await storage.crawl_status(reader, relevance_threshold=0.1)
        await reader_engine.dispose()
    assert report.frontier == 1  # the uncommitted row is not seen, and nothing blocked


def test_a_bad_database_url_is_a_clear_error() -> None:
    with pytest.raises(storage.StorageError, match="bad database URL 'nonsense://'"):
        storage.open_engine("nonsense://")


async def test_a_read_only_database_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "ro.db"
    sqlite3.connect(path).close()
    engine = storage.open_engine(f"sqlite+aiosqlite:///file:{path}?mode=ro&uri=true")
    try:
        with pytest.raises(storage.StorageError, match=r"cannot prepare the database.*readonly"):
            await storage.create_schema(engine)
    finally:
        await engine.dispose()


async def test_a_raise_lifts_only_queued_urls_estimated_lower(
    engine: AsyncEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writes, "READ_CHUNK", 2)  # the URLs looked up in several statements
    async with engine.begin() as connection:
        low, _high, done = await storage.add_urls(
            connection,
            [
                NewUrl("http://a/low", "a", 1, 0.01),
                NewUrl("http://a/high", "a", 1, 0.5),
                NewUrl("http://a/done", "a", 1, 0.0),
            ],
        )
        await storage.record_fetches(connection, [fetched(done.id)])
        raises = [
            storage.ScoreRaise(("http://a/low", "http://a/high", "http://a/done"), 0.2),
            storage.ScoreRaise(("http://a/unknown",), 0.9),
            storage.ScoreRaise((), 0.9),
            storage.ScoreRaise(("http://a/low",), 0.3),  # in order: above the first raise
            storage.ScoreRaise(("http://a/low", "http://a/high"), 0.25),  # below both now
        ]
        assert await storage.raise_scores(connection, raises) == [[low.id], [], [], [low.id], []]
    async with engine.connect() as connection:
        scores = {q.url: q.score async for batch in storage.iter_queued(connection) for q in batch}
    assert scores == {"http://a/low": 0.3, "http://a/high": 0.5}
