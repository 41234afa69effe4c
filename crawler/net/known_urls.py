"""The URLs the collection certainly holds, remembered in bounded memory so that a link
to one costs nothing more."""

from __future__ import annotations

KNOWN_URLS_MEMORY = 2**16  # URLs KnownUrls keeps, per generation (9 MB for both, full)


class KnownUrls:
    """URLs the collection certainly holds (links handed to storage), so that a link to
    one is dropped before it is counted, scored or written: it cannot be new.

    Bounded: two generations of `memory` URLs each, the oldest forgotten when the newest
    fills up, a URL seen again moved to the newest (a site's navigation stays). A URL
    forgotten costs what it did without this memory: the database, the authority on
    what is known, finds it there. The URLs are kept as Python's 64-bit string hashes,
    so a new URL is taken for a known one about once in 2**64 / (2 * memory) lookups.
    """

    def __init__(self, *, memory: int = KNOWN_URLS_MEMORY) -> None:
        self.memory = memory
        self._new: set[int] = set()
        self._old: set[int] = set()

    def add(self, url: str) -> None:
        self._new.add(hash(url))
        if len(self._new) >= self.memory:
            self._old, self._new = self._new, set()

    def __contains__(self, url: object) -> bool:
        if not isinstance(url, str):
            return False
        key = hash(url)
        if key in self._new:
            return True
        if key in self._old:
            self._new.add(key)
            if len(self._new) >= self.memory:
                self._old, self._new = self._new, set()
            return True
        return False
