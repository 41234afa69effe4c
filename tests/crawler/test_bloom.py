"""The Bloom filter that tells which hosts the database may hold."""

from __future__ import annotations

from crawler.fetch.bloom import BloomFilter


def test_every_key_added_is_found_and_few_others_are() -> None:
    bloom = BloomFilter(bits=2**16, hashes=7)
    added = [f"host{i}.example" for i in range(5_000)]
    for key in added:
        bloom.add(key)
    assert all(key in bloom for key in added)
    others = [f"other{i}.example" for i in range(10_000)]
    false_positives = sum(key in bloom for key in others)
    assert false_positives < 100  # about 0.2% expected at this load
    assert "absent" not in BloomFilter(bits=64, hashes=3)
