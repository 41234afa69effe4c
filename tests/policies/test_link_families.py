"""Which fetch revealed which links, held for the last links revealed only."""

from __future__ import annotations

import pytest

from policies.frontier.qlearning.link_families import LinkFamilies


def relatives(families: LinkFamilies, page: int) -> list[tuple[int, list[int]]]:
    return [(level, links.tolist()) for level, links in families.relatives(page)]


def test_a_pages_relatives_are_its_revealers_links_then_those_its_revealer_came_with() -> None:
    families = LinkFamilies()
    families.revealed(1, [2, 3])  # a hub reveals two sections
    families.revealed(2, [4, 5, 6])  # a section reveals three pages
    assert relatives(families, 5) == [(1, [4, 5, 6]), (2, [2, 3])]
    assert relatives(families, 3) == [(1, [2, 3])]  # the hub itself came from no fetch
    assert relatives(families, 1) == []
    assert relatives(families, 99) == []


def test_a_link_revealed_again_keeps_its_first_revealer() -> None:
    families = LinkFamilies()
    families.revealed(1, [3])
    families.revealed(2, [3, 4])
    assert relatives(families, 3) == [(1, [3])]
    assert relatives(families, 4) == [(1, [3, 4])]


def test_the_oldest_families_go_once_more_links_are_held_than_the_capacity() -> None:
    families = LinkFamilies(capacity=5)
    families.revealed(1, [10, 11])
    families.revealed(2, [20, 21])
    assert len(families) == 4
    families.revealed(3, [30, 31])  # six held: the first family goes
    assert len(families) == 4
    assert relatives(families, 10) == []
    assert relatives(families, 20) == [(1, [20, 21])]
    families.revealed(4, list(range(40, 50)))  # larger than the capacity: kept alone
    assert len(families) == 10
    assert relatives(families, 30) == []
    assert relatives(families, 45)[0][1] == list(range(40, 50))


def test_a_capacity_below_one_link_is_named() -> None:
    with pytest.raises(ValueError, match="at least one link, not 0"):
        LinkFamilies(capacity=0)
