"""A user's labels of stored pages and the pages worth labelling next, on SQLite and
PostgreSQL."""

from __future__ import annotations

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

import storage
from storage import NewUrl
from storage.labels import labelled_texts, load_labels, save_label, uncertain_pages
from tests.storage.helpers import fetched


async def store(
    engine: AsyncEngine, pages: dict[str, float | None], *, text: bool = True
) -> dict[str, int]:
    """Store fetched pages of these relevances; their ids by URL."""
    async with engine.begin() as connection:
        queued = await storage.add_urls(connection, [NewUrl(url, "a", 0, 0.0) for url in pages])
        await storage.record_fetches(
            connection,
            [
                fetched(
                    q.id,
                    title=f"title of {q.url}",
                    relevance=pages[q.url],
                    text=f"text of {q.url}" if text else None,
                )
                for q in queued
            ],
        )
    return {q.url: q.id for q in queued}


async def test_a_label_is_saved_replaced_and_loaded_with_its_page_text(
    engine: AsyncEngine,
) -> None:
    ids = await store(engine, {"http://a/1": 0.3, "http://a/2": 0.05})
    assert await save_label(engine, ids["http://a/1"], True)
    assert await save_label(engine, ids["http://a/2"], True)
    assert await save_label(engine, ids["http://a/2"], False)  # changed its mind

    labels = await load_labels(engine)
    assert {(label.url_id, label.relevant) for label in labels} == {
        (ids["http://a/1"], True),
        (ids["http://a/2"], False),
    }
    assert labels == sorted(labels, key=lambda label: label.labelled_at)
    assert await load_labels(engine, since=labels[-1].labelled_at + 1.0) == []
    assert await labelled_texts(engine, [ids["http://a/2"], 999]) == {
        ids["http://a/2"]: "text of http://a/2"
    }


async def test_a_label_of_an_unknown_id_or_a_page_without_text_is_refused(
    engine: AsyncEngine,
) -> None:
    queued = await store(engine, {"http://a/no-text": 0.2}, text=False)
    async with engine.begin() as connection:
        frontier = await storage.add_urls(connection, [NewUrl("http://a/queued", "a", 1, 0.1)])

    assert not await save_label(engine, 12345, True)
    assert not await save_label(engine, queued["http://a/no-text"], True)
    assert not await save_label(engine, frontier[0].id, False)  # not fetched
    assert await load_labels(engine) == []


async def test_uncertain_pages_are_nearest_the_threshold_first_and_unlabelled(
    engine: AsyncEngine,
) -> None:
    async with engine.begin() as connection:
        await storage.set_meta(connection, {"relevance_threshold": "0.2"})
    ids = await store(
        engine,
        {
            "http://a/far-above": 0.6,
            "http://a/just-below": 0.17,
            "http://a/on": 0.2,
            "http://a/below": 0.05,
            "http://a/just-above": 0.22,
            "http://a/unscored": None,
        },
    )
    await save_label(engine, ids["http://a/on"], True)

    pages = await uncertain_pages(engine, 3)
    assert [page.url for page in pages] == [
        "http://a/just-above",
        "http://a/just-below",
        "http://a/below",
    ]
    first = pages[0]
    assert (first.url_id, first.title, first.relevance) == (
        ids["http://a/just-above"],
        "title of http://a/just-above",
        0.22,
    )
    assert [page.margin for page in pages] == pytest.approx([0.02, 0.03, 0.15])
    assert len(await uncertain_pages(engine, 10)) == 4  # the labelled and unscored left out


async def test_uncertain_pages_asks_for_a_limit_of_at_least_one(engine: AsyncEngine) -> None:
    with pytest.raises(ValueError, match="limit of pages must be at least 1, not 0"):
        await uncertain_pages(engine, 0)


async def test_an_older_database_gains_the_labels_table(db_url: str) -> None:
    engine = storage.open_engine(db_url)
    try:
        await storage.create_schema(engine)
        async with engine.begin() as connection:
            await connection.exec_driver_sql("DROP TABLE labels")
        await storage.create_schema(engine)
        ids = await store(engine, {"http://a/1": 0.3})
        assert await save_label(engine, ids["http://a/1"], True)
    finally:
        await engine.dispose()
