"""Which fetch revealed each link, and which links each fetch revealed, for the last
fetches: the pages found beside a fetched one, and those found beside the page that
revealed it.

A page of the topic is often one of several its discoverer links to (a hub's list, a
section's index): once it is fetched, the links found with it are worth more than their
own words say. The frontier raises them (`QLearningFrontier`). The families are held
for the last `capacity` links revealed, oldest first out, so that what they cost stays
bounded however long the crawl runs: 158 bytes a link held, traced (100,000 links held
of 400,000 revealed, twenty a page: 15.8 MB; `git show 810f12e:bench/link_families_memory.py`), the
link's entry by its id and its place in its family's array.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator, Sequence

import numpy as np

DEFAULT_CAPACITY = 100_000  # links held


class LinkFamilies:
    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        if capacity < 1:
            raise ValueError(f"link families hold at least one link, not {capacity}")
        self.capacity = capacity
        self._families: OrderedDict[int, np.ndarray] = OrderedDict()  # page -> its new links
        self._revealer: dict[int, int] = {}  # a held link -> the page that revealed it
        self._held = 0  # links in the families held

    def __len__(self) -> int:
        """Links held."""
        return self._held

    def revealed(self, page: int, links: Sequence[int]) -> None:
        """`page` was fetched and revealed these new links (the first fetch to reveal a
        link is its revealer)."""
        if not links or page in self._families:
            return
        family = np.fromiter(links, dtype=np.int64, count=len(links))
        self._families[page] = family
        self._held += len(family)
        for link in family.tolist():
            self._revealer.setdefault(link, page)
        while self._held > self.capacity and len(self._families) > 1:
            self._drop_oldest()

    def revealer_of(self, link: int) -> int | None:
        """The page whose fetch revealed a held link."""
        return self._revealer.get(link)

    def family(self, page: int) -> np.ndarray | None:
        """The new links a held page's fetch revealed."""
        return self._families.get(page)

    def relatives(self, page: int, levels: int = 2) -> Iterator[tuple[int, np.ndarray]]:
        """(level, links): the links revealed with `page` (level 1: its revealer's new
        links, itself among them), then with its revealer (level 2), and so on up to
        `levels`, as far as the families held reach."""
        for level in range(1, levels + 1):
            revealer = self._revealer.get(page)
            if revealer is None:
                return
            family = self._families.get(revealer)
            if family is None:
                return
            yield level, family
            page = revealer

    def _drop_oldest(self) -> None:
        page, family = self._families.popitem(last=False)
        self._held -= len(family)
        for link in family.tolist():
            if self._revealer.get(link) == page:
                del self._revealer[link]
