"""The per-host budget (`max_pages_per_host`): at most so many pages fetched from one host.

A page counts against the host of the URL dispatched, from its dispatch: the frontier
takes it from the budget when it hands the URL out, and gives it back if the visit
brings no page (its turn went to robots.txt, it was throttled and put back, refused by
robots.txt or the network guard, or it ended in a redirect that was not followed). A
page counts when its host answered it with anything but a redirect (`is_page`): robots.txt
and redirects are not counted. A host whose pages taken reach the budget is closed: no
URL of it is dispatched, held in memory or read back from the database, where its URLs
stay queued (a resumed crawl with a larger budget goes on with them). A resumed crawl
counts each host's pages from the database (`storage.pages_by_host`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from crawler.fetch.deciding import REDIRECT_STATUSES


def is_page(status: int | None) -> bool:
    """Whether a visit's final answer is a page of its host's budget: an answer, and not
    a redirect (one not followed: out of scope, to a URL fetched already, ...)."""
    return status is not None and status not in REDIRECT_STATUSES


class HostBudget:
    def __init__(self, limit: int | None, taken: Mapping[str, int] | None = None) -> None:
        self.limit = limit  # None: no budget
        self.taken: Counter[str] = Counter(taken or {})

    @property
    def enabled(self) -> bool:
        return self.limit is not None

    def add(self, pages: Mapping[str, int]) -> None:
        """Pages fetched already (by earlier runs), by host."""
        self.taken.update(pages)

    def allows(self, host: str) -> bool:
        """Whether `host` may have another page."""
        return self.limit is None or self.taken[host] < self.limit

    def take(self, host: str) -> bool:
        """A URL of `host` is dispatched; whether the host is closed by it."""
        if self.limit is None:
            return False
        self.taken[host] += 1
        return self.taken[host] == self.limit

    def give_back(self, host: str) -> bool:
        """A dispatched URL of `host` brought no page; whether the host opens again."""
        if self.limit is None or self.taken[host] <= 0:
            return False
        self.taken[host] -= 1
        return self.taken[host] == self.limit - 1
