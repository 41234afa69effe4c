"""bench/link_families_memory.py traces the families held once more are revealed."""

from __future__ import annotations

from tests.bench.scripts import load_script


def test_the_families_traced_are_the_last_links_revealed_within_their_capacity() -> None:
    measure = load_script("link_families_memory.py").measure
    held, traced = measure(pages=6_000, links=20)  # 120,000 revealed
    assert 100_000 - 20 < held <= 100_000
    assert traced > 50 * held  # an id and its entry, at the least
