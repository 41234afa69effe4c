"""A Bloom filter of strings: fixed memory, no false negatives, a few false positives.

The host memory asks it whether the database may hold a host, so that a host's first
visit reads the database only if it may (`crawler.fetch.host_memory`). With 2**24 bits (2 MiB)
and 7 hashes, one in a hundred answers is a false "may" at 1.7 million hosts, one in ten
at 3 million; a false "may" costs a read that finds nothing.
"""

from __future__ import annotations

import hashlib

DEFAULT_BITS = 2**24
DEFAULT_HASHES = 7


class BloomFilter:
    def __init__(self, *, bits: int = DEFAULT_BITS, hashes: int = DEFAULT_HASHES) -> None:
        self.bits = bits
        self.hashes = hashes
        self._array = bytearray((bits + 7) // 8)

    def add(self, key: str) -> None:
        for index in self._indexes(key):
            self._array[index >> 3] |= 1 << (index & 7)

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str):
            return False
        return all(self._array[index >> 3] & (1 << (index & 7)) for index in self._indexes(key))

    def _indexes(self, key: str) -> list[int]:
        # two hashes make the k (Kirsch & Mitzenmacher)
        digest = hashlib.blake2b(key.encode(), digest_size=16).digest()
        first, second = int.from_bytes(digest[:8]), int.from_bytes(digest[8:]) | 1
        return [(first + i * second) % self.bits for i in range(self.hashes)]
