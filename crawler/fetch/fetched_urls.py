"""Which URLs are fetched already, so that a redirect never fetches a page a second time.

A URL is fetched once, whether a link or a redirect leads to it. The database knows the
URLs stored (done, or reached as a redirect's target); memory knows those under way:
dispatched, or reserved as a redirect's target, and not yet committed. A redirect to
either is not followed: the visit ends as `duplicate`, its `final_url` naming the URL.

Memory also keeps the URLs whose visits this process committed lately (a bounded
`KnownUrls`): a redirect to one of them ends without asking the database, which a
redirect's target mostly is by the time the redirect is met (on the testbed, three
redirects in four). A stored URL stays stored, so memory is never wrong where it answers;
where it forgot, or another daemon stored the URL, the database answers.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from sqlalchemy.ext.asyncio import AsyncEngine

import storage
from crawler.net.known_urls import KnownUrls

STORED_MEMORY = 2**14  # committed URLs remembered, per generation (2 MB for both, full)


class FetchedUrls:
    def __init__(
        self,
        db: AsyncEngine,
        *,
        memory: int = STORED_MEMORY,
        retry: storage.DatabaseRetry | None = None,
    ) -> None:
        self.db = db
        self.retry = retry or storage.DatabaseRetry(db, patience=0.0)  # the database away
        self._under_way: Counter[str] = Counter()
        self._stored = KnownUrls(memory=memory)

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

    def stored(self, urls: Iterable[str]) -> None:
        """These URLs' visits are committed: they are fetched for good."""
        urls = list(urls)
        self.end(urls)
        for url in urls:
            self._stored.add(url)

    def __contains__(self, url: object) -> bool:
        """Whether `url` is under way: a queued URL that is must not be dispatched."""
        return url in self._under_way

    async def claim(self, url: str) -> bool:
        """Take `url` on for a redirect, unless it is fetched or being fetched already.
        Reserved before the database is asked, so no other visit can take it meanwhile."""
        if url in self._under_way or url in self._stored:
            return False
        self.begin(url)
        try:
            done = await self.retry.run(lambda: self._is_done(url), doing="read from")
        except BaseException:
            self.end([url])
            raise
        if done:
            self.end([url])
        return not done

    async def _is_done(self, url: str) -> bool:
        async with self.db.connect() as connection:
            return await storage.is_known_done(connection, url)

    def __len__(self) -> int:
        """URLs under way."""
        return len(self._under_way)
