"""The collection read out for export: every URL done, with its page's main text if
asked for. Takes an async connection and yields plain records."""

from __future__ import annotations

import dataclasses
import zlib
from collections.abc import AsyncIterator
from datetime import UTC

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.orm import aliased

from storage.models import URL_DONE, PageText, UrlRow
from storage.records import ExportRecord

_ORIGINAL = aliased(UrlRow)  # the page a near-duplicate repeats


async def iter_export(
    connection: AsyncConnection, *, min_relevance: float | None = None, text: bool = False
) -> AsyncIterator[ExportRecord]:
    """Every fetched (or refused) URL, in the order they were discovered; with `text`,
    each with its page's main text (None where none was stored)."""
    query = (
        select(
            UrlRow.url,
            UrlRow.final_url,
            UrlRow.canonical_url,
            UrlRow.host,
            UrlRow.status,
            UrlRow.content_type,
            UrlRow.relevance,
            UrlRow.title,
            UrlRow.depth,
            UrlRow.discovered_from,
            UrlRow.fetched_at,
            UrlRow.fetch_count,
            UrlRow.error,
            UrlRow.warc_file,
            UrlRow.warc_offset,
            _ORIGINAL.url.label("near_duplicate_of"),
            UrlRow.language,
        )
        .outerjoin(_ORIGINAL, _ORIGINAL.id == UrlRow.near_duplicate_of)
        .where(UrlRow.state == URL_DONE)
        .order_by(UrlRow.id)
    )
    if min_relevance is not None:
        query = query.where(UrlRow.relevance >= min_relevance)
    if text:
        query = query.add_columns(PageText.text).outerjoin(PageText, PageText.url_id == UrlRow.id)
    result = await connection.stream(query.execution_options(yield_per=1000))
    async for row in result:
        values = dict(row._mapping)
        if text and values["text"] is not None:
            values["text"] = zlib.decompress(values["text"]).decode()
        record = ExportRecord(**values)
        if record.fetched_at is not None and record.fetched_at.tzinfo is None:
            # SQLite keeps no offset; everything is written in UTC
            record = dataclasses.replace(record, fetched_at=record.fetched_at.replace(tzinfo=UTC))
        yield record
