"""Near-duplicates: the SimHash of a page's main text, the bounded index that finds a
stored page within a few bits of it, and a crawl of a loopback site whose copies of a
page are stored as near-duplicates of the first, within a run and across runs."""

from __future__ import annotations

import random
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from crawler.config import defaults
from crawler.process.near_duplicates import MAX_DISTANCE, NearDuplicates, distance, simhash
from tests.crawler.helpers import SEEN, collection, crawl, html, serving, site

VOCABULARY = (
    "solar panel energy grid battery inverter roof sun light power voltage current "
    "storage cell silicon module array watt hour meter output charge heat weather cloud "
    "season winter summer angle tilt shade install cost saving tariff export house"
)
WORDS = VOCABULARY.split()


def prose(seed: int, words: int = 1000) -> str:
    """Sentences of the words above, the same for the same seed."""
    chosen = random.Random(seed)
    return " ".join(chosen.choice(WORDS) for _ in range(words)) + "."


def page(text: str, *links: str, footer: str = "") -> str:
    anchors = "".join(f'<a href="{href}">more on solar energy</a>' for href in links)
    return (
        "<html><head><title>solar energy</title></head><body>"
        f"<main><p>{text}</p><p>{footer}</p></main><nav>{anchors}</nav></body></html>"
    )


def test_a_text_with_another_footer_is_a_few_bits_from_its_copy_and_far_from_others() -> None:
    text = prose(1)
    copy = simhash(f"{text} Last changed on Monday by Ann.")
    original = simhash(f"{text} Last changed on Tuesday by Bob.")
    other = simhash(prose(2))
    assert copy is not None
    assert original is not None
    assert other is not None
    assert distance(copy, original) <= defaults.NEAR_DUPLICATE_DISTANCE
    assert distance(copy, other) > 10


def test_too_little_text_has_no_fingerprint() -> None:
    assert simhash("") is None
    assert simhash("solar energy panels") is None
    assert simhash("sun " * 500) is None  # one shingle, repeated


def test_the_index_finds_a_fingerprint_within_its_distance_other_than_the_page_itself() -> None:
    index = NearDuplicates(distance=3, capacity=10)
    index.add(1, 0b1011 << 40)
    assert index.find((0b1011 << 40) ^ 0b111, 2) == 1  # 3 bits apart
    assert index.find((0b1011 << 40) ^ 0b1111, 2) is None  # 4 bits apart
    assert index.find(0b1011 << 40, 1) is None  # the page itself, visited again


def test_the_index_holds_at_most_its_capacity_the_least_recently_used_leaving() -> None:
    ones, zeros, odd, nibbles = 2**64 - 1, 0, 0x5555_5555_5555_5555, 0x0F0F_0F0F_0F0F_0F0F
    index = NearDuplicates(distance=2, capacity=2)
    index.add(1, ones)
    index.add(2, zeros)
    assert index.find(ones, 9) == 1  # matched: the most recently used now
    index.add(3, odd)
    assert len(index) == 2
    assert index.find(zeros, 9) is None  # page 2 left
    assert index.find(ones, 9) == 1
    index.add(1, nibbles)  # page 1 visited again, its text changed
    assert index.find(ones, 9) is None
    assert index.find(nibbles, 9) == 1


@given(
    st.integers(0, MAX_DISTANCE),
    st.lists(st.integers(0, 2**64 - 1), min_size=1, max_size=30),
    st.integers(0, 2**64 - 1),
)
def test_the_bands_find_what_comparing_with_every_fingerprint_finds(
    within: int, held: list[int], wanted: int
) -> None:
    index = NearDuplicates(distance=within, capacity=100)
    for url_id, fingerprint in enumerate(held):
        index.add(url_id, fingerprint)
    nearest = min(distance(wanted, fingerprint) for fingerprint in held)
    found = index.find(wanted, -1)
    if nearest <= within:
        assert found is not None
        assert distance(wanted, held[found]) == nearest
    else:
        assert found is None
    # a fingerprint a few bits off one held is always found
    flipped = held[0] ^ sum(1 << bit for bit in range(0, 64, 9)[:within])  # bits far apart
    assert index.find(flipped, -1) is not None


async def test_a_copy_of_a_page_with_another_footer_is_stored_as_its_near_duplicate(
    tmp_path: Path,
) -> None:
    text = prose(3)
    app = site(
        {
            "/": html(page(prose(4), "/first", "/copy", "/other")),
            "/first": html(page(text, footer="Last changed on Monday.")),
            "/copy": html(page(text, footer="Last changed on Tuesday, by Bob.")),
            "/other": html(page(prose(5))),
        }
    )
    db = f"sqlite+aiosqlite:///{tmp_path / 'crawl.db'}"
    async with serving(app) as base:
        await crawl(db, [base], per_host_concurrency=1)
    pages = await collection(db)
    firsts = {f"{base}first", f"{base}copy"}
    repeats = {url: r.near_duplicate_of for url, r in pages.items() if r.near_duplicate_of}
    assert len(repeats) == 1
    ((copy, original),) = repeats.items()
    assert {copy, original} == firsts  # whichever was fetched first is the original
    assert pages[copy].relevance is not None  # its relevance is stored all the same
    assert sorted(app[SEEN].paths()).count("/copy") == 1


async def test_a_resumed_crawl_finds_the_copies_of_the_pages_its_earlier_runs_stored(
    tmp_path: Path,
) -> None:
    text = prose(6)
    app = site(
        {
            "/first": html(page(text, footer="Last changed on Monday.")),
            "/copy": html(page(text, footer="Last changed on Tuesday, by Bob.")),
        }
    )
    db = f"sqlite+aiosqlite:///{tmp_path / 'crawl.db'}"
    async with serving(app) as base:
        await crawl(db, [f"{base}first"])
        await crawl(db, [f"{base}copy"])
    pages = await collection(db)
    assert pages[f"{base}first"].near_duplicate_of is None
    assert pages[f"{base}copy"].near_duplicate_of == f"{base}first"


async def test_with_no_memory_for_fingerprints_no_page_is_a_near_duplicate(
    tmp_path: Path,
) -> None:
    text = prose(7)
    app = site({"/": html(page(text, "/copy")), "/copy": html(page(text, footer="Bob."))})
    db = f"sqlite+aiosqlite:///{tmp_path / 'crawl.db'}"
    async with serving(app) as base:
        await crawl(db, [base], near_duplicate_memory=0)
    assert all(r.near_duplicate_of is None for r in (await collection(db)).values())
