"""Full-text search of the stored pages: SQLite's FTS5, PostgreSQL's tsvector.

The index holds each page's title and main text, written in the transaction that
stores the page (`index_pages`, called by `storage.writes.record_fetches`). On SQLite
it is an FTS5 table whose rowid is the page's URL id; on PostgreSQL a table of the text
with a generated tsvector under a GIN index.

A hit's score blends how well its text matches with the page's topic relevance:

    score = text_rank / best_text_rank
            * (RELEVANCE_BASE + (1 - RELEVANCE_BASE) * relevance / best_relevance)

where text_rank is BM25 (FTS5's bm25() over the title and text, negated) or
ts_rank_cd on PostgreSQL (the title's words weighted A, the text's D), and
best_text_rank and best_relevance the best among the query's matches: the best text
match on the most relevant page scores 1, and on a page of relevance 0 half as much.
Relevance is taken relative to the best because a crawl's scores are cosines of a few
tenths at most: taken as they are, they would hardly move a hit.
"""

from __future__ import annotations

import bisect
import logging
import re
import zlib
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, bindparam, inspect, text
from sqlalchemy.ext.asyncio import AsyncConnection

from storage.records import SearchHit

log = logging.getLogger(__name__)

SEARCH_TABLE = "page_search"
RELEVANCE_BASE = 0.5  # the weight of a page's text match when its relevance is 0
INDEXED_CHARS = 100_000  # of a page's text; PostgreSQL's tsvector holds at most 1 MB
CANDIDATES = 200  # best text matches, at least, re-ranked by the blended score
BUILD_BATCH = 1_000  # pages indexed a statement when a database's index is built
MARK_START, MARK_END = "[", "]"  # around the query's words in a snippet
# SQLite: a word at the end of a page's indexed text for each of these cosines its
# relevance reaches, so that a word in half the pages is ranked among the most relevant
# of them first (`_sqlite_candidates`)
BAND_EDGES = (0.05, 0.15, 0.3, 0.6, 0.9)
BAND_WORD = "zzrelevanceband"
_BAND_WORDS = re.compile(rf"\s*\b{BAND_WORD}\d+\b")
SNIPPET_WORDS = 16

# One column indexed, the title at the head of the text: bm25() costs 40% less a
# matching page than over a title column and a text column. The default detail=full:
# with detail=column, which keeps no positions and costs the writer a fifth less,
# bm25() costs ten times more.
_SQLITE_TABLE = (
    f"CREATE VIRTUAL TABLE {SEARCH_TABLE} "
    "USING fts5(title UNINDEXED, body, tokenize='porter unicode61')"
)
_POSTGRES_TABLE = f"""
CREATE TABLE {SEARCH_TABLE} (
    url_id INTEGER PRIMARY KEY REFERENCES urls (id),
    title TEXT NOT NULL,
    body TEXT NOT NULL,
    document tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('english', title), 'A') || to_tsvector('english', body)
    ) STORED
)"""
_POSTGRES_INDEX = f"CREATE INDEX ix_{SEARCH_TABLE}_document ON {SEARCH_TABLE} USING GIN (document)"


def create_search_index(connection: Connection) -> None:
    """Make the search index if the database has none, and index the pages stored
    before it was made, saying how far it has got."""
    if inspect(connection).has_table(SEARCH_TABLE):
        return
    if connection.dialect.name == "sqlite":
        connection.exec_driver_sql(_SQLITE_TABLE)
    else:
        connection.exec_driver_sql(_POSTGRES_TABLE)
        connection.exec_driver_sql(_POSTGRES_INDEX)
    _index_stored_pages(connection)


def drop_banded_search_index(connection: Connection) -> None:
    """Drop an SQLite index of schema 4, whose pages hold one word for their relevance
    band where `_sqlite_candidates` reads one for each edge they reach; it is built
    again from the stored pages."""
    if connection.dialect.name == "sqlite" and inspect(connection).has_table(SEARCH_TABLE):
        connection.exec_driver_sql(f"DROP TABLE {SEARCH_TABLE}")


def _index_stored_pages(connection: Connection) -> None:
    total = connection.execute(text("SELECT count(*) FROM page_texts")).scalar_one()
    if not total:
        return
    log.info("indexing %d stored pages for search", total)
    done, after = 0, -1
    while True:
        rows = connection.execute(
            text(
                "SELECT p.url_id, u.title, p.text, u.relevance FROM page_texts AS p "
                "JOIN urls AS u ON u.id = p.url_id WHERE p.url_id > :after "
                "ORDER BY p.url_id LIMIT :batch"
            ),
            {"after": after, "batch": BUILD_BATCH},
        ).all()
        if not rows:
            break
        index_pages(
            connection,
            [(i, title, zlib.decompress(blob).decode(), rel) for i, title, blob, rel in rows],
        )
        done += len(rows)
        after = rows[-1][0]
        log.info("indexed %d of %d stored pages for search", done, total)


def index_pages(
    connection: Connection, pages: Sequence[tuple[int, str | None, str, float | None]]
) -> None:
    """Index (url id, title, text, relevance) of pages stored, in place of what they had."""
    if not pages:
        return
    sqlite = connection.dialect.name == "sqlite"
    rows = []
    for url_id, title, body, relevance in sorted(pages):  # in their ids' order: _lock_order
        row = {"url_id": url_id, "title": _clean(title or ""), "body": _clean(body[:INDEXED_CHARS])}
        if sqlite:
            reached = bisect.bisect_right(BAND_EDGES, relevance or 0.0)
            bands = " ".join(f"{BAND_WORD}{band}" for band in range(reached))
            row["body"] = f"{row['title']}\n{row['body']}\n{bands}"
        rows.append(row)
    if sqlite:
        # FTS5 has no upsert
        connection.execute(
            text(f"DELETE FROM {SEARCH_TABLE} WHERE rowid IN :ids").bindparams(
                bindparam("ids", expanding=True)
            ),
            {"ids": [row["url_id"] for row in rows]},
        )
        connection.execute(
            text(
                f"INSERT INTO {SEARCH_TABLE} (rowid, title, body) VALUES (:url_id, :title, :body)"
            ),
            rows,
        )
    else:
        connection.execute(
            text(
                f"INSERT INTO {SEARCH_TABLE} (url_id, title, body) VALUES (:url_id, :title, :body) "
                "ON CONFLICT (url_id) DO UPDATE SET title = excluded.title, body = excluded.body"
            ),
            rows,
        )


def _clean(value: str) -> str:
    return value.replace("\x00", " ")  # PostgreSQL's text holds no NUL


def query_words(query: str) -> list[str]:
    """The words of a user's query. Only its words are searched for, each as a plain
    word: quotes, operators (AND, NEAR, -, *) and column names (title:) mean nothing."""
    words = re.findall(r"\w+", query)
    if not words:
        raise ValueError(f"the query {query!r} has no words to search for")
    return words


async def search_pages(
    connection: AsyncConnection,
    query: str,
    *,
    limit: int = 10,
    min_relevance: float | None = None,
    host: str | None = None,
) -> list[SearchHit]:
    """The pages matching every word of `query`, best first (see the module's score)."""
    if limit < 1:
        raise ValueError(f"the limit of hits must be at least 1, not {limit}")
    words = query_words(query)
    return await connection.run_sync(_search, words, limit, min_relevance, host)


def _search(
    connection: Connection,
    words: list[str],
    limit: int,
    min_relevance: float | None,
    host: str | None,
) -> list[SearchHit]:
    """The pages holding every word, best first; when fewer than `limit` do, the pages
    holding some of the words follow them, best first among themselves."""
    every = _scored(connection, words, limit, min_relevance, host, every_word=True)
    if len(every) >= limit or len(words) < 2:
        return _hits(connection, words, every, every_word=True)
    found = {row.id for _, row in every}
    some = _scored(connection, words, limit + len(found), min_relevance, host, every_word=False)
    below = every[-1][0] if every else 1.0  # each scores below the last holding every word
    more = [(below * score, row) for score, row in some if row.id not in found]
    return _hits(connection, words, every, every_word=True) + _hits(
        connection, words, more[: limit - len(every)], every_word=False
    )


def _scored(
    connection: Connection,
    words: list[str],
    limit: int,
    min_relevance: float | None,
    host: str | None,
    *,
    every_word: bool,
) -> list[tuple[float, Any]]:
    values: dict[str, Any] = {"candidates": max(CANDIDATES, 10 * limit)}
    filters = ""
    if min_relevance is not None:
        filters += " AND u.relevance >= :min_relevance"
        values["min_relevance"] = min_relevance
    if host is not None:
        filters += " AND u.host = :host"
        values["host"] = host
    values["match"] = match = _match(connection, words, every_word=every_word)
    if connection.dialect.name == "sqlite":
        if filters:
            statement = (
                f"SELECT u.id, u.url, u.title, u.relevance, u.host, -s.rank AS text_rank "
                f"FROM {SEARCH_TABLE} AS s JOIN urls AS u ON u.id = s.rowid "
                f"WHERE {SEARCH_TABLE} MATCH :match {filters} "
                "ORDER BY s.rank LIMIT :candidates"
            )
        else:
            statement = ""
    else:
        statement = (
            "SELECT u.id, u.url, u.title, u.relevance, u.host, "
            "ts_rank_cd(s.document, to_tsquery('english', :match)) AS text_rank "
            f"FROM {SEARCH_TABLE} AS s JOIN urls AS u ON u.id = s.url_id "
            f"WHERE s.document @@ to_tsquery('english', :match){filters} "
            "ORDER BY text_rank DESC LIMIT :candidates"
        )
    if statement:
        candidates = connection.execute(text(statement), values).all()
    else:
        candidates = _sqlite_candidates(connection, match, values["candidates"])
    if not candidates:
        return []
    best_text = max(row.text_rank for row in candidates) or 1.0
    best_relevance = max(_bounded(row.relevance) for row in candidates) or 1.0
    return sorted(
        (
            (
                row.text_rank
                / best_text
                * (
                    RELEVANCE_BASE + (1 - RELEVANCE_BASE) * _bounded(row.relevance) / best_relevance
                ),
                row,
            )
            for row in candidates
        ),
        key=lambda pair: (-pair[0], pair[1].id),
    )[:limit]


def _match(connection: Connection, words: list[str], *, every_word: bool) -> str:
    """The words as the index's query: each a plain word (\\w+ holds no quote and no
    operator), all of them required or any one."""
    if connection.dialect.name == "sqlite":
        return (" " if every_word else " OR ").join(f'"{word}"' for word in words)
    return (" & " if every_word else " | ").join(f"'{word}'" for word in words)


def _hits(
    connection: Connection, words: list[str], scored: list[tuple[float, Any]], *, every_word: bool
) -> list[SearchHit]:
    if not scored:
        return []
    match = _match(connection, words, every_word=every_word)
    snippets = _snippets(connection, match, [row.id for _, row in scored])
    return [
        SearchHit(
            url=row.url,
            title=row.title,
            host=row.host,
            relevance=row.relevance,
            score=score,
            text_rank=row.text_rank,
            snippet=snippets.get(row.id, ""),
        )
        for score, row in scored
    ]


def _sqlite_candidates(connection: Connection, match: str, wanted: int) -> list[Any]:
    """The best `wanted` text matches among the most relevant pages that hold that many,
    so that the most relevant pages are weighed when more than `wanted` pages match
    better, and so that a common word costs little: bm25() costs a microsecond or two a
    matching page, and ranked among all of them a word in half of 100,000 pages takes 60
    to 100 ms. A query of more than `wanted` matches is ranked among the pages of
    relevance 0.9 or more first, then 0.8, ... down to all of them, until a step gives
    `wanted`, the candidates of the steps above it kept; those steps hold few matches, so
    cost little, whatever the collection's relevance (a crawl's cosines of a few tenths,
    or spread over 0..1)."""
    statement = text(
        "SELECT u.id, u.url, u.title, u.relevance, u.host, -s.rank AS text_rank FROM "
        f"(SELECT rowid, rank FROM {SEARCH_TABLE} WHERE {SEARCH_TABLE} MATCH :match "
        "ORDER BY rank LIMIT :candidates) AS s JOIN urls AS u ON u.id = s.rowid"
    )
    matches = connection.execute(
        text(f"SELECT count(*) FROM {SEARCH_TABLE} WHERE {SEARCH_TABLE} MATCH :match"),
        {"match": match},
    ).scalar_one()  # counting without ranking costs a tenth of ranking
    found: dict[int, Any] = {}
    steps = [match]
    if matches > wanted:
        steps[:0] = [f"{match} AND {BAND_WORD}{band}" for band in reversed(range(len(BAND_EDGES)))]
    for restricted in steps:
        rows = connection.execute(statement, {"match": restricted, "candidates": wanted}).all()
        found.update((row.id, row) for row in rows)
        if len(rows) >= wanted:
            break
    return list(found.values())


def _bounded(relevance: float | None) -> float:
    return min(max(relevance or 0.0, 0.0), 1.0)


def _snippets(connection: Connection, match: str, ids: list[int]) -> dict[int, str]:
    """A passage of each page's text around the query's words, the words marked."""
    if connection.dialect.name == "sqlite":
        statement = text(
            f"SELECT rowid, snippet({SEARCH_TABLE}, 1, '{MARK_START}', '{MARK_END}', '…', "
            f"{SNIPPET_WORDS}) FROM {SEARCH_TABLE} WHERE {SEARCH_TABLE} MATCH :match "
            "AND rowid IN :ids"
        )
    else:
        options = (
            f"StartSel={MARK_START}, StopSel={MARK_END}, MaxWords={SNIPPET_WORDS}, "
            f'MinWords={SNIPPET_WORDS // 2}, MaxFragments=2, FragmentDelimiter=" … "'
        )
        statement = text(
            "SELECT url_id, ts_headline('english', body, to_tsquery('english', :match), "
            f"'{options}') FROM {SEARCH_TABLE} WHERE url_id IN :ids"
        )
    statement = statement.bindparams(bindparam("ids", expanding=True))
    rows = connection.execute(statement, {"match": match, "ids": ids}).all()
    return {url_id: _BAND_WORDS.sub("", snippet) for url_id, snippet in rows}
