"""One stored page read whole, as the daemon's API and web page show it: its fetch,
its main text, and the links it revealed."""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from storage.models import URL_DONE, URL_QUEUED, LabelRow, PageText, UrlRow

OUTLINKS = 200  # links of a page read at most


@dataclass(frozen=True, slots=True)
class Outlink:
    url_id: int
    url: str
    visited: bool  # its visit has ended (fetched, failed or refused); else queued


@dataclass(frozen=True, slots=True)
class PageDetail:
    url_id: int
    url: str
    final_url: str | None  # where redirects led, if anywhere
    host: str
    title: str | None
    relevance: float | None
    depth: int
    status: int | None
    content_type: str | None
    content_length: int | None
    fetched_at: datetime | None
    fetch_count: int
    error: str | None  # the visit's error kind; None for a page fetched
    discovered_from: str | None  # the page whose link it was first met on; None: a seed
    text: str | None  # the main text, if the crawl keeps texts
    label: bool | None  # a user's judgement of it (`storage.labels`); None: not labelled
    # The URLs this page revealed: those first met on it. A link to a URL known
    # before (from another page, or a seed) is not recorded with the page.
    outlinks: list[Outlink]
    more_outlinks: bool  # it revealed more than those read


async def page_detail(
    connection: AsyncConnection, url_id: int, *, outlinks: int = OUTLINKS
) -> PageDetail | None:
    """The page whose URL has id `url_id`, once its visit has ended; None for an id
    unknown or a URL still queued."""
    row = (
        await connection.execute(
            select(UrlRow.__table__).where(UrlRow.id == url_id, UrlRow.state == URL_DONE)
        )
    ).one_or_none()
    if row is None:
        return None
    blob = await connection.scalar(select(PageText.text).where(PageText.url_id == url_id))
    label = await connection.scalar(select(LabelRow.relevant).where(LabelRow.url_id == url_id))
    links = (
        await connection.execute(
            select(UrlRow.id, UrlRow.url, UrlRow.state)
            .where(UrlRow.discovered_from == row.url)
            .order_by(UrlRow.id)
            .limit(outlinks + 1)
        )
    ).all()
    return PageDetail(
        url_id=row.id,
        url=row.url,
        final_url=row.final_url,
        host=row.host,
        title=row.title,
        relevance=row.relevance,
        depth=row.depth,
        status=row.status,
        content_type=row.content_type,
        content_length=row.content_length,
        fetched_at=row.fetched_at,
        fetch_count=row.fetch_count,
        error=row.error,
        discovered_from=row.discovered_from,
        text=None if blob is None else zlib.decompress(blob).decode(),
        label=None if label is None else bool(label),
        outlinks=[Outlink(id_, url, state != URL_QUEUED) for id_, url, state in links[:outlinks]],
        more_outlinks=len(links) > outlinks,
    )


async def url_ids(connection: AsyncConnection, urls: Sequence[str]) -> dict[str, int]:
    """The ids of those of `urls` the database knows, by URL."""
    if not urls:
        return {}
    rows = await connection.execute(select(UrlRow.url, UrlRow.id).where(UrlRow.url.in_(urls)))
    return {url: url_id for url, url_id in rows.all()}
