"""Full-text search of the stored pages, on SQLite (FTS5) and PostgreSQL (tsvector)."""

from __future__ import annotations

import logging

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

import storage
from storage import NewUrl
from storage.search import CANDIDATES
from tests.storage.helpers import fetched

PAGES = {
    "http://a/panels": ("Solar panels", "Solar panels turn sunlight into electricity.", 0.9),
    "http://a/wind": ("Wind power", "Turbines turn wind into electricity, not sunlight.", 0.4),
    "http://b/cake": ("Baking", "A cake of flour, eggs and sugar.", 0.1),
    "http://b/solar-oven": ("Solar oven", "A cake of rice, baked by solar heat.", 0.6),
}


async def store(engine: AsyncEngine, pages: dict[str, tuple[str, str, float]]) -> None:
    async with engine.begin() as connection:
        queued = await storage.add_urls(
            connection, [NewUrl(url, url.split("/")[2], 0, 0.0) for url in pages]
        )
        await storage.record_fetches(
            connection,
            [
                fetched(
                    q.id, title=pages[q.url][0], text=pages[q.url][1], relevance=pages[q.url][2]
                )
                for q in queued
            ],
        )


async def search(engine: AsyncEngine, query: str, **options: object) -> list[storage.SearchHit]:
    async with engine.connect() as connection:
        return await storage.search_pages(connection, query, **options)  # type: ignore[arg-type]


async def test_a_stored_page_is_found_by_its_words_with_a_marked_snippet(
    engine: AsyncEngine,
) -> None:
    await store(engine, PAGES)
    hits = await search(engine, "sunlight electricity")
    assert [hit.url for hit in hits] == ["http://a/panels", "http://a/wind"]
    first = hits[0]
    assert (first.title, first.relevance) == ("Solar panels", 0.9)
    assert "[sunlight]" in first.snippet
    assert "[electricity]" in first.snippet
    assert 0 < hits[1].score < first.score <= 1


async def test_relevance_lifts_a_page_above_one_with_as_good_a_text_match(
    engine: AsyncEngine,
) -> None:
    await store(engine, PAGES)
    hits = await search(engine, "cake")
    # both pages name a cake once in as many words; the more relevant one comes first
    assert [hit.url for hit in hits] == ["http://b/solar-oven", "http://b/cake"]
    hits = await search(engine, "solar")
    assert hits[0].url == "http://a/panels"


async def test_a_page_fetched_again_is_found_by_its_new_text_only(engine: AsyncEngine) -> None:
    await store(engine, PAGES)
    async with engine.begin() as connection:
        (row,) = (
            await connection.execute(text("SELECT id FROM urls WHERE url = 'http://b/cake'"))
        ).all()
        await storage.record_fetches(
            connection,
            [
                fetched(
                    row[0],
                    title="Bread",
                    text="Bread of rye.",
                    relevance=0.1,
                    fetched_at=fetched(0).fetched_at.replace(year=2027),
                )
            ],
        )
    assert [hit.url for hit in await search(engine, "rye")] == ["http://b/cake"]
    assert [hit.url for hit in await search(engine, "sugar")] == []


async def test_filters_by_relevance_and_host_and_limits_the_hits(engine: AsyncEngine) -> None:
    await store(engine, PAGES)
    assert [h.url for h in await search(engine, "solar", min_relevance=0.7)] == ["http://a/panels"]
    assert [h.url for h in await search(engine, "solar", host="b")] == ["http://b/solar-oven"]
    assert len(await search(engine, "solar", limit=1)) == 1


@pytest.mark.parametrize(
    "query",
    [
        '"solar',
        "solar*",
        "-solar",
        "solar NEAR panels",
        "title:solar",
        "solar AND (",
        "NOT solar",
        "solar^ \\",
    ],
)
async def test_the_query_syntax_of_the_database_cannot_be_reached_from_user_words(
    engine: AsyncEngine, query: str
) -> None:
    roof = {"http://c/roof": ("Roof", "Solar panels near the roof and not in the title.", 0.5)}
    await store(engine, PAGES | roof)
    hits = await search(engine, query)  # no syntax error: each word is a plain word
    assert "http://c/roof" in {hit.url for hit in hits}


async def test_a_query_without_words_is_an_error_saying_so(engine: AsyncEngine) -> None:
    await store(engine, PAGES)
    with pytest.raises(ValueError, match="no words"):
        await search(engine, ' " * - : ')


async def test_a_database_made_before_the_index_gets_it_built_at_start(
    engine: AsyncEngine, caplog: pytest.LogCaptureFixture
) -> None:
    await store(engine, PAGES)
    async with engine.begin() as connection:
        await connection.execute(text("DROP TABLE page_search"))
    with caplog.at_level(logging.INFO, logger="storage"):
        await storage.create_schema(engine)
    assert [hit.url for hit in await search(engine, "flour")] == ["http://b/cake"]
    assert any("indexed 4 of 4 stored pages" in message for message in caplog.messages)


async def test_an_index_of_schema_4_is_built_again_with_a_word_for_each_edge_reached(
    engine: AsyncEngine, caplog: pytest.LogCaptureFixture
) -> None:
    """Schema 4's index held one word for a page's band; the candidates' steps read one
    for each edge of relevance a page reaches, so the older index is built again."""
    if engine.dialect.name != "sqlite":
        pytest.skip("PostgreSQL ranks every match: its index has no relevance words")
    await store(engine, PAGES)
    async with engine.begin() as connection:
        await connection.execute(text("DELETE FROM page_search"))
        await connection.execute(
            text(
                "INSERT INTO page_search (rowid, title, body) SELECT id, title, "
                "title || ' zzrelevanceband8' FROM urls"
            )
        )
        await connection.execute(
            text("UPDATE crawl_meta SET value = '4' WHERE key = 'schema_version'")
        )
    with caplog.at_level(logging.INFO, logger="storage"):
        await storage.create_schema(engine)
    assert any("indexed 4 of 4 stored pages" in message for message in caplog.messages)
    async with engine.connect() as connection:
        at_least_a_half = await connection.execute(
            text("SELECT rowid FROM page_search WHERE page_search MATCH 'zzrelevanceband3'")
        )
        at_least_a_tenth = await connection.execute(
            text("SELECT rowid FROM page_search WHERE page_search MATCH 'zzrelevanceband1'")
        )
        urls = dict((await connection.execute(text("SELECT id, url FROM urls"))).all())
    # edges 0.05, 0.15, 0.3, 0.6, 0.9: 0.9 and 0.6 reach the fourth, 0.1 only the first
    assert {urls[i] for (i,) in at_least_a_half} == {"http://a/panels", "http://b/solar-oven"}
    assert {urls[i] for (i,) in at_least_a_tenth} == set(PAGES) - {"http://b/cake"}
    assert [hit.url for hit in await search(engine, "flour")] == ["http://b/cake"]


async def test_a_relevant_page_is_ranked_though_more_pages_than_the_candidates_match_better(
    engine: AsyncEngine,
) -> None:
    """A word in hundreds of pages: the most relevant of them is weighed, not only the
    best text matches."""
    pages = {
        f"http://shop/{i}": (f"Kit {i}", f"Solar kit number {i} for sale.", 0.01)
        for i in range(CANDIDATES + 50)
    }
    guide = " ".join(["How panels on a roof make power from light, step by step."] * 3)
    pages["http://guide/"] = ("Guide", f"Solar power. {guide} Solar cells.", 0.9)
    await store(engine, pages)
    hits = await search(engine, "solar")
    assert hits[0].url == "http://guide/"


async def test_pages_holding_some_of_the_words_follow_when_too_few_hold_every_one(
    engine: AsyncEngine,
) -> None:
    await store(engine, PAGES)
    hits = await search(engine, "solar electricity", limit=3)
    assert hits[0].url == "http://a/panels"  # the one page holding both words
    assert {hit.url for hit in hits[1:]} == {"http://a/wind", "http://b/solar-oven"}
    assert [hit.score for hit in hits] == sorted((hit.score for hit in hits), reverse=True)
    assert "[solar]" in hits[2].snippet or "[solar]" in hits[1].snippet
    assert len(await search(engine, "solar electricity", limit=1)) == 1
    assert await search(engine, "electricity flour", limit=10) != []  # no page holds both
