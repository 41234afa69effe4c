"""The writes of a crawl's results, as functions of a synchronous connection.

The storage writer runs them in its own thread on a SQLite connection of its own, each
statement a plain call (`crawler.store.write_loop`); through an async connection
(aiosqlite's, asyncpg's) every statement would be handed to the driver's thread or
loop and back, several times a statement, which cost the writer's transactions twice
the CPU they take this way (`git show 810f12e:bench/writer_cost.py`).
`storage.repository` runs the same functions on an async connection, through
`run_sync`. The crawl's state (hosts, sources, learned models, the timeline) is written
by `storage.state_writes`.
"""

from __future__ import annotations

import functools
import zlib
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Connection, bindparam, func, or_, select, update

from storage.dialects import conflict_insert, dialect_insert, lock_order
from storage.models import URL_DONE, URL_QUEUED, URL_REACHED, PageText, UrlRow, WarcFileRow
from storage.records import FetchRecord, NewUrl, QueuedUrl, ScoreRaise
from storage.search import index_pages

TEXT_COMPRESSION_LEVEL = 1  # fast; page text compresses about 3:1 even so


def add_urls(connection: Connection, urls: Sequence[NewUrl]) -> list[QueuedUrl]:
    """Insert the URLs not yet known; return only those that were new, in the order given."""
    if not urls:
        return []
    if connection.dialect.name == "postgresql":
        # leave out the URLs known already, read without waiting: inserting one that
        # another daemon's open transaction is updating (its fetch being recorded) waits
        # for that transaction, which may be waiting for this one's rows: a deadlock
        known = set(
            connection.execute(
                select(UrlRow.url).where(UrlRow.url.in_({new.url for new in urls}))
            ).scalars()
        )
        urls = [new for new in urls if new.url not in known]
        if not urls:
            return []
    statement = _add_urls_statement(connection.dialect.name)
    rows = _url_rows(urls, URL_QUEUED)
    lock_order(connection, rows, "url")
    result = connection.execute(statement, rows)
    given = {new.url: index for index, new in enumerate(urls)}
    return sorted((QueuedUrl(*row) for row in result.all()), key=lambda q: given[q.url])


def _url_rows(urls: Sequence[NewUrl], state: int) -> list[dict[str, Any]]:
    return [
        {
            "url": new.url,
            "host": new.host,
            "depth": new.depth,
            "score": new.score,
            "discovered_from": new.discovered_from,
            "state": state,
            "fetch_count": 0,
        }
        for new in urls
    ]


@functools.cache
def _add_urls_statement(dialect: str) -> Any:
    """Built once a dialect: a batch's statements are the same but for their rows, and
    building one costs the writer's thread more than running it."""
    return (
        dialect_insert(dialect, UrlRow)
        .on_conflict_do_nothing(index_elements=["url"])
        .returning(UrlRow.id, UrlRow.url, UrlRow.host, UrlRow.depth, UrlRow.score)
    )


def _queued_among_urls() -> Any:
    """The condition that a URL looked up by its address is queued, in a form no index
    serves. With no statistics SQLite's planner takes `url IN (three or more) AND state
    = queued` to the (state, ...) indexes, not to the URL's unique one, and reads every
    queued URL: on the million-page testbed, some 600,000 for each write batch."""
    return UrlRow.state + 0 == URL_QUEUED


def mark_reached(connection: Connection, urls: Sequence[NewUrl]) -> dict[str, int]:
    """Record URLs fetched as redirect targets: known, and never queued again. Returns
    the ids of those that were queued, by URL, for the frontier to drop; and of those
    reached already, so that a transaction run again after its commit's answer was lost
    returns them as its first run did."""
    if not urls:
        return {}
    result = connection.execute(
        update(UrlRow)
        .where(
            UrlRow.url.in_([new.url for new in urls]),
            (UrlRow.state + 0).in_([URL_QUEUED, URL_REACHED]),  # as `_queued_among_urls`
        )
        .values(state=URL_REACHED)
        .returning(UrlRow.url, UrlRow.id)
    )
    dropped = {url: url_id for url, url_id in result.all()}
    rows = _url_rows(urls, URL_REACHED)
    lock_order(connection, rows, "url")
    connection.execute(
        conflict_insert(connection, UrlRow).on_conflict_do_nothing(index_elements=["url"]), rows
    )
    return dropped


# built once: building a statement costs more than running it
_QUEUED_SCORES = select(UrlRow.id, UrlRow.url, UrlRow.score).where(
    UrlRow.url.in_(bindparam("b_urls", expanding=True)), _queued_among_urls()
)
_SET_SCORE = (
    update(UrlRow)
    .where(UrlRow.id == bindparam("b_id"), UrlRow.state == URL_QUEUED)
    .values(score=bindparam("b_score"))
)
READ_CHUNK = 2_000  # URLs looked up in one statement, well within SQLite's parameters


def raise_scores(connection: Connection, raises: Sequence[ScoreRaise]) -> list[list[int]]:
    """Raise each queued URL of each raise whose score is lower to the raise's score,
    the raises taken in order; the ids raised, a list for each raise, for the frontier
    to rank them again. One look-up and one batch of updates for all the raises: a
    statement a raise cost the writer's thread a tenth more CPU a page on the testbed."""
    wanted = sorted({url for each in raises for url in each.urls})
    queued: dict[str, list[Any]] = {}  # url -> [id, score as raised so far]
    for start in range(0, len(wanted), READ_CHUNK):
        chunk = wanted[start : start + READ_CHUNK]
        for url_id, url, score in connection.execute(_QUEUED_SCORES, {"b_urls": chunk}):
            queued[url] = [url_id, score]
    raised: list[list[int]] = []
    scores: dict[int, float] = {}
    for each in raises:
        mine = []
        for url in each.urls:
            row = queued.get(url)
            if row is not None and row[1] < each.score:
                row[1] = scores[row[0]] = each.score
                mine.append(row[0])
        raised.append(mine)
    if scores:
        # in the order of their ids, as `lock_order` would write them
        rows = [{"b_id": url_id, "b_score": score} for url_id, score in sorted(scores.items())]
        connection.execute(_SET_SCORE, rows)
    return raised


_RECORD_FETCH = (
    update(UrlRow)
    .where(
        UrlRow.id == bindparam("b_id"),
        # a visit is recorded once, also by a transaction run again after its commit's
        # answer was lost: its fetch is not counted twice
        or_(UrlRow.fetched_at.is_(None), UrlRow.fetched_at != bindparam("b_fetched_at")),
    )
    .values(
        state=URL_DONE,
        final_url=bindparam("b_final_url"),
        # a re-visit, which does not take a canonical URL again, keeps the first visit's
        canonical_url=func.coalesce(bindparam("b_canonical_url"), UrlRow.canonical_url),
        status=bindparam("b_status"),
        content_type=bindparam("b_content_type"),
        content_length=bindparam("b_content_length"),
        relevance=bindparam("b_relevance"),
        title=bindparam("b_title"),
        fetched_at=bindparam("b_fetched_at"),
        error=bindparam("b_error"),
        fetch_count=UrlRow.fetch_count + 1,
        # a visit that captured nothing (a timeout) keeps the last capture's place
        warc_file=func.coalesce(bindparam("b_warc_file"), UrlRow.warc_file),
        warc_offset=func.coalesce(bindparam("b_warc_offset"), UrlRow.warc_offset),
        simhash=bindparam("b_simhash"),
        near_duplicate_of=bindparam("b_near_duplicate_of"),
        language=bindparam("b_language"),
    )
)


def record_fetches(connection: Connection, records: Sequence[FetchRecord]) -> None:
    if not records:
        return
    # before the first statement takes the database's write lock
    texts = _compressed_texts(records)
    updates = [
        {
            "b_id": record.url_id,
            "b_final_url": record.final_url,
            "b_canonical_url": record.canonical_url,
            "b_status": record.status,
            "b_content_type": record.content_type,
            "b_content_length": record.content_length,
            "b_relevance": record.relevance,
            "b_title": record.title,
            "b_fetched_at": record.fetched_at,
            "b_error": record.error,
            "b_warc_file": record.warc_file,
            "b_warc_offset": record.warc_offset,
            "b_simhash": signed_64(record.simhash),
            "b_near_duplicate_of": record.near_duplicate_of,
            "b_language": record.language,
        }
        for record in records
    ]
    lock_order(connection, updates, "b_id")
    connection.execute(_RECORD_FETCH, updates)
    if texts:
        connection.execute(_page_text_upsert(connection.dialect.name), texts)
        # searchable once the page is stored, and never before
        index_pages(
            connection, [(r.url_id, r.title, r.text, r.relevance) for r in records if r.text]
        )


@functools.cache
def _page_text_upsert(dialect: str) -> Any:
    statement = dialect_insert(dialect, PageText)
    return statement.on_conflict_do_update(
        index_elements=["url_id"], set_={"text": statement.excluded.text}
    )


def signed_64(value: int | None) -> int | None:
    """An unsigned 64-bit number as the signed one a BIGINT column holds."""
    return None if value is None or value < 2**63 else value - 2**64


def _compressed_texts(records: Sequence[FetchRecord]) -> list[dict[str, Any]]:
    return [
        {"url_id": r.url_id, "text": zlib.compress(r.text.encode(), TEXT_COMPRESSION_LEVEL)}
        for r in records
        if r.text
    ]


def save_warc_files(connection: Connection, committed: Mapping[str, int]) -> None:
    """Record how many bytes of each WARC file hold records committed with their rows."""
    if not committed:
        return
    statement = conflict_insert(connection, WarcFileRow)
    statement = statement.on_conflict_do_update(
        index_elements=["name"], set_={"committed_bytes": statement.excluded.committed_bytes}
    )
    connection.execute(
        statement, [{"name": name, "committed_bytes": size} for name, size in committed.items()]
    )
