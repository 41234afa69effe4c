"""HTML's nesting capped before the parser sees it, as browsers cap it.

An HTML tree builder looks through its stack of open elements at many start and end
tags (is a `<p>` in button scope? a `<table>` in table scope?), so a page of N elements
left open costs it N * N: 200 kB of unclosed `<div>` takes lexbor seconds, 5 MB hours.
Browsers bound the depth of the tree they build (Chromium at 512 elements) and put
anything deeper beside its parent. `cap_nesting` does the same on the text: it counts
the elements a page leaves open and drops the start tags, and their end tags, of those
that would open deeper than `MAX_DEPTH`. Their text, and their links, stay; a page
nested no deeper than that, which is every page written by hand or by a site's
templates, comes back unchanged.

Counting costs about as much as parsing, so a page of at most `COUNT_ABOVE` start tags
is not counted: it cannot be nested deeper than that, and nested all the way it costs
lexbor about 17 ms. On Debian's HTML documentation one page in twenty has more.

The count is a bound, not a parse: elements whose end tag HTML makes optional (`<p>`,
`<li>`, `<td>`, ...) close themselves and are not counted, nor are links (the parser
closes a link when the next starts) or void elements, which have no content; and a
tag-like text inside a script or a comment counts as a tag (it can only make the bound
reached sooner on a page that is deep anyway).
"""

from __future__ import annotations

import re
from itertools import accumulate
from operator import sub

__all__ = ["MAX_DEPTH", "cap_nesting"]

MAX_DEPTH = 512  # elements open at once, as in Chromium; real pages stay far below
COUNT_ABOVE = 4096  # start tags: a page with fewer is parsed as it is

_TAG = re.compile(r"<(/?)([A-Za-z][^\s/>]*)[^>]*>?")
_TAG_NAME = re.compile(r"<(/?)([A-Za-z][^\s/>]*)")  # a tag's start: enough to count
# no content, an end tag HTML lets the next sibling or the parent's end imply, or (a
# link) closed by the parser when the next one starts: none of them nests deep
_NOT_COUNTED = frozenset(
    {
        "a",
        # void elements
        "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
        "source", "track", "wbr", "param", "keygen",
        # optional end tags
        "html", "head", "body", "p", "li", "dt", "dd", "option", "optgroup", "tr", "td",
        "th", "thead", "tbody", "tfoot", "caption", "colgroup", "rb", "rt", "rtc", "rp",
    }
)  # fmt: skip


def cap_nesting(html: str, *, limit: int = MAX_DEPTH, count_above: int = COUNT_ABOVE) -> str:
    """`html` with the start tags that would open an element deeper than `limit` left
    out, and as many end tags after them; unchanged when it is no deeper, or when it has
    at most `count_above` start tags."""
    if html.count("<") - html.count("</") <= count_above or _deepest(html) <= limit:
        return html
    depth = 0
    dropped = 0  # start tags left out whose end tags have not come yet
    cuts: list[tuple[int, int]] = []
    for tag in _TAG.finditer(html):
        if tag[2].lower() in _NOT_COUNTED:
            continue
        if tag[1]:  # an end tag: a dropped element's first, then an open one's
            if dropped:
                dropped -= 1
                cuts.append(tag.span())
            elif depth:
                depth -= 1
        elif depth < limit:
            depth += 1
        else:
            dropped += 1
            cuts.append(tag.span())
    if not cuts:
        return html
    kept, start = [], 0
    for begin, end in cuts:
        kept.append(html[start:begin])
        start = end
    kept.append(html[start:])
    return "".join(kept)


def _deepest(html: str) -> int:
    """The most elements `html` leaves open at once, counted as `cap_nesting` counts
    them. A depth that an end tag would take below 0 stays at 0, so the depth after
    step i is the sum of the steps to i less the lowest sum before it (or 0): sums and
    running minimums that itertools takes in C, a third faster than a loop of tags."""
    steps = [
        -1 if end else 1
        for end, name in _TAG_NAME.findall(html)
        if name.lower() not in _NOT_COUNTED
    ]
    sums = list(accumulate(steps, initial=0))
    return max(map(sub, sums, accumulate(sums, min)))
