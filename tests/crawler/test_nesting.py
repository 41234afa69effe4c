"""The nesting cap's count: the depth it finds is the depth a tree builder would reach."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from crawler.process.nesting import cap_nesting

TAGS = ["<div>", "</div>", "<span class=x>", "</span>", "<li>", "</li>", "<a href=/y>", "</a>"]


def test_end_tags_with_nothing_open_do_not_hide_the_depth_after_them() -> None:
    """Stray end tags close nothing: the divs after them nest as deep as without them."""
    deep = "</div>" * 30 + "<div>" * 20 + "solar" + "</div>" * 20
    assert (
        cap_nesting(deep, limit=5, count_above=0)
        == "</div>" * 30 + "<div>" * 5 + "solar" + "</div>" * 5
    )


@given(st.lists(st.sampled_from(TAGS), max_size=60), st.integers(min_value=1, max_value=8))
def test_a_page_is_left_as_it_is_exactly_when_no_start_tag_opens_beyond_the_limit(
    tags: list[str], limit: int
) -> None:
    html = "".join(tags)
    depth, deepest = 0, 0
    for tag in tags:
        if tag in ("<div>", "<span class=x>"):
            depth += 1
        elif tag in ("</div>", "</span>"):
            depth = max(depth - 1, 0)
        deepest = max(deepest, depth)
    assert (cap_nesting(html, limit=limit, count_above=0) == html) == (deepest <= limit)
