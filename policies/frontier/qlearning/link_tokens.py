"""A link's context as features: the words of its anchor, of its URL (camelCase and
punctuation split), of the text around it and of its parent's title and headings, its
host, and bins of its parent's relevance and its depth, as (name, value) pairs that the
link model hashes (`LinkContextModel.features`)."""

from __future__ import annotations

import bisect
import functools
import math
import re
from collections.abc import Sequence

RELEVANCE_EDGES = (0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.4)
DEPTH_EDGES = (1, 2, 3, 5, 9)
MAX_WORDS = 30  # words kept of one context field
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_STOP = frozenset(
    ["the", "an", "of", "and", "or", "to", "in", "for", "on", "is", "by", "with", "html", "htm"]
)


def words(text: str) -> list[str]:
    """Lower-case words of a text or URL, camelCase and punctuation split."""
    found = (w.lower() for w in _WORD.findall(text))
    return [w for w in found if len(w) > 1 and w not in _STOP][:MAX_WORDS]


def _bin(value: float, edges: Sequence[float]) -> int:
    return bisect.bisect_right(edges, value)


@functools.lru_cache(maxsize=2_048)
def _field_tokens(prefix: str, text: str) -> tuple[tuple[str, float], ...]:
    """One field's tokens. Cached: a page's title and headings are every one of its
    links', and navigation's anchors and blocks repeat from page to page."""
    found = set(words(text))
    weight = 1.0 / math.sqrt(len(found)) if found else 0.0
    return tuple((f"{prefix}={word}", weight) for word in found)


def link_tokens(
    *,
    url: str,
    host: str,
    depth: int,
    anchor: str,
    around: str,
    parent_title: str,
    parent_relevance: float | None,
) -> list[tuple[str, float]]:
    """A link's features as (name, value) pairs: each field's words weigh 1/sqrt(count),
    so that a long field does not drown a short one."""
    path = url.split("://", 1)[-1].partition("/")[2]
    tokens: list[tuple[str, float]] = [
        (f"h={host}", 1.0),
        (f"d={_bin(depth, DEPTH_EDGES)}", 1.0),
        (
            "p=seed"
            if parent_relevance is None
            else f"p={_bin(parent_relevance, RELEVANCE_EDGES)}",
            1.0,
        ),
    ]
    for prefix, text in (("a", anchor), ("u", path), ("c", around), ("t", parent_title)):
        tokens.extend(_field_tokens(prefix, text))
    return tokens
