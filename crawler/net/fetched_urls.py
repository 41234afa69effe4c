"""Which URLs are fetched already, so that a redirect never fetches a page a second time.

A URL is fetched once, whether a link or a redirect leads to it. The database knows the
URLs stored (done, or reached as a redirect's target); memory knows those under way:
dispatched, or reserved as a redirect's target, and not yet committed. A redirect to
either is not followed: the visit ends as `duplicate`, its `final_url` naming the URL.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from sqlalchemy.ext.asyncio import AsyncEngine

import storage


class FetchedUrls:
    def __init__(self, db: AsyncEngine) -> None:
        self.db = db
        self._under_way: Counter[str] = Counter()

    def begin(self, url: str) -> None:
        """`url` is about to be fetched: no redirect may lead to it meanwhile."""
        self._under_way[url] += 1

    def end(self, urls: Iterable[str]) -> None:
        """These URLs' visits are committed, or put back to be tried again."""
        for url in urls:
            left = self._under_way.get(url, 0) - 1
            if left > 0:
                self._under_way[url] = left
            else:
                self._under_way.pop(url, None)

    def __contains__(self, url: object) -> bool:
        """Whether `url` is under way: a queued URL that is must not be dispatched."""
        return url in self._under_way

    async def claim(self, url: str) -> bool:
        """Take `url` on for a redirect, unless it is fetched or being fetched already.
        Reserved before the database is asked, so no other visit can take it meanwhile."""
        if url in self._under_way:
            return False
        self.begin(url)
        try:
            async with self.db.connect() as connection:
                done = await storage.is_known_done(connection, url)
        except BaseException:
            self.end([url])
            raise
        if done:
            self.end([url])
        return not done

    def __len__(self) -> int:
        """URLs under way."""
        return len(self._under_way)
