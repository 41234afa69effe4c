"""The index of near-duplicates a crawl starts with: the fingerprints of the pages its
earlier runs stored, the newest within the index's capacity. Each daemon of a shared
crawl holds an index of its own, which starts with the pages of every daemon stored so
far and then learns only its own: two daemons storing copies of one text at the same
time may both store theirs as a first page."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncEngine

import storage
from crawler.process.near_duplicates import NearDuplicates


async def restored_index(db: AsyncEngine, *, distance: int, capacity: int) -> NearDuplicates | None:
    """The index, holding the fingerprints stored so far; None with no capacity (no
    near-duplicates)."""
    if capacity == 0:
        return None
    index = NearDuplicates(distance=distance, capacity=capacity)
    async with db.connect() as connection:
        for url_id, fingerprint in await storage.load_simhashes(connection, limit=capacity):
            index.add(url_id, fingerprint)
    return index
