"""Near-duplicate pages: a 64-bit SimHash of a page's main text, and an index of the
fingerprints of the pages stored, bounded in memory.

SimHash (Charikar, STOC 2002): each distinct shingle of the text, its 16 bytes of UTF-8
from some place on (about three words; any script, spaces or none), is hashed to 64
bits; bit i of the fingerprint is set where most shingles' hashes have it set. Texts
that share most of their shingles have fingerprints a few bits apart (their Hamming
distance); Manku, Jain & Das Sarma (WWW 2007) call web pages at 3 bits of 64
near-duplicates. The shingles are taken at the places whose first 8 bytes hash into an
eighth of the range, the same places in any text (so two texts keep the same share of
what they have in common), and everything is done in NumPy over the text's bytes, never
a word at a time: docs/crawling.md gives the cost a page and the quality against word
shingles and datasketch's MinHash.

The index finds, among the fingerprints it holds, one within `distance` bits: the 64 bits
are cut into `distance + 1` bands, and two fingerprints within `distance` bits agree on
at least one band whole (the pigeonhole principle), so a fingerprint is compared only
with those that share one of its bands. It holds at most `capacity` fingerprints, the
least recently stored or matched leaving first.
"""

from __future__ import annotations

from collections import OrderedDict
from itertools import pairwise

import numpy as np

SHINGLE_BYTES = 16
SAMPLE_BITS = 3  # one place in 2**3 starts a shingle
MIN_SHINGLES = 8  # a text of fewer has no fingerprint: too little to tell pages apart
MAX_DISTANCE = 6  # beyond, bands of 9 bits or fewer: a lookup compares too many (as
# the setting's check, crawler.config.defaults.NEAR_DUPLICATE_MAX_DISTANCE)
BITS = 64
_U64 = np.dtype("<u8")
# SplitMix64's finalizer (Steele, Lea & Flood 2014): every bit of a word of 8 bytes
# moves every bit of its hash
_MIX_1, _MIX_2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_SECOND = np.uint64(0x9E3779B97F4A7C15)  # the shingle's second 8 bytes hash apart
_SAMPLED_BELOW = np.uint64(1 << (BITS - SAMPLE_BITS))


def _mix(values: np.ndarray) -> np.ndarray:
    values = values ^ (values >> np.uint64(30))
    values *= _MIX_1
    values ^= values >> np.uint64(27)
    values *= _MIX_2
    values ^= values >> np.uint64(31)
    return values


def simhash(text: str) -> int | None:
    """The text's 64-bit SimHash over its sampled shingles of 16 bytes; None for a
    text of fewer than `MIN_SHINGLES` of them."""
    data = text.lower().encode()
    if len(data) < SHINGLE_BYTES + 8:
        return None
    # every 8 bytes of the text from each place on, as one number (a view, not a copy)
    words = np.ndarray((len(data) - 7,), dtype=_U64, buffer=data, strides=(1,))
    starts = words[: len(words) - (SHINGLE_BYTES - 8)]
    places = np.flatnonzero(starts * _MIX_1 < _SAMPLED_BELOW)
    shingles = _mix(words[places]) ^ _mix(words[places + (SHINGLE_BYTES - 8)] ^ _SECOND)
    shingles.sort()
    if len(shingles) > 1:  # distinct: a shingle repeated counts once
        shingles = shingles[np.concatenate(([True], shingles[1:] != shingles[:-1]))]
    if len(shingles) < MIN_SHINGLES:
        return None
    bits = np.unpackbits(shingles.view(np.uint8).reshape(-1, 8), axis=1, bitorder="little")
    majority = bits.sum(axis=0, dtype=np.int64) * 2 > len(shingles)
    return int(np.packbits(majority, bitorder="little").view(_U64)[0])


def distance(a: int, b: int) -> int:
    """Bits in which two fingerprints differ."""
    return (a ^ b).bit_count()


class NearDuplicates:
    """Fingerprints of stored pages, by URL id, and the lookup of one within `distance`
    bits of a new page's."""

    def __init__(self, *, distance: int, capacity: int) -> None:
        if not 0 <= distance <= MAX_DISTANCE:
            raise ValueError(f"distance must be between 0 and {MAX_DISTANCE}, not {distance}")
        if capacity < 1:
            raise ValueError(f"capacity must be at least 1, not {capacity}")
        self.distance = distance
        self.capacity = capacity
        bands = distance + 1
        edges = [BITS * band // bands for band in range(bands + 1)]
        # each band's (shift, mask)
        self._bands = [(low, (1 << (high - low)) - 1) for low, high in pairwise(edges)]
        self._fingerprints: OrderedDict[int, int] = OrderedDict()  # least recent first
        self._by_band: list[dict[int, list[int]]] = [{} for _ in self._bands]

    def __len__(self) -> int:
        return len(self._fingerprints)

    def find(self, fingerprint: int, url_id: int) -> int | None:
        """The URL id of a page held within `distance` bits of `fingerprint`, other than
        `url_id` itself (a re-visit), the nearest; None if there is none."""
        nearest, best = None, self.distance + 1
        for (shift, mask), by_value in zip(self._bands, self._by_band, strict=True):
            for other in by_value.get((fingerprint >> shift) & mask, ()):
                apart = distance(fingerprint, self._fingerprints[other])
                if apart < best and other != url_id:
                    nearest, best = other, apart
        if nearest is not None:
            self._fingerprints.move_to_end(nearest)
        return nearest

    def add(self, url_id: int, fingerprint: int) -> None:
        """Hold `fingerprint` as `url_id`'s (in place of an earlier one), the least
        recent leaving beyond `capacity`."""
        self.remove(url_id)
        self._fingerprints[url_id] = fingerprint
        for (shift, mask), by_value in zip(self._bands, self._by_band, strict=True):
            by_value.setdefault((fingerprint >> shift) & mask, []).append(url_id)
        while len(self._fingerprints) > self.capacity:
            self.remove(next(iter(self._fingerprints)))

    def remove(self, url_id: int) -> None:
        fingerprint = self._fingerprints.pop(url_id, None)
        if fingerprint is None:
            return
        for (shift, mask), by_value in zip(self._bands, self._by_band, strict=True):
            key = (fingerprint >> shift) & mask
            holders = by_value[key]
            holders.remove(url_id)
            if not holders:
                del by_value[key]
