"""The fingerprints of stored pages that find their near-duplicates
(`crawler.process.near_duplicates`), read back when a crawl resumes."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from storage.models import URL_DONE, UrlRow


async def load_simhashes(connection: AsyncConnection, *, limit: int) -> list[tuple[int, int]]:
    """(URL id, unsigned SimHash) of the last `limit` pages stored that repeat no other
    page, the oldest of them first."""
    rows = await connection.execute(
        select(UrlRow.id, UrlRow.simhash)
        .where(
            UrlRow.state == URL_DONE,
            UrlRow.simhash.is_not(None),
            UrlRow.near_duplicate_of.is_(None),
        )
        .order_by(UrlRow.fetched_at.desc(), UrlRow.id.desc())
        .limit(limit)
    )
    # a BIGINT column holds the SimHash signed
    return [
        (url_id, simhash % 2**64) for url_id, simhash in reversed(rows.all()) if simhash is not None
    ]
