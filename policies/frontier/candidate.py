"""What a frontier queues: a known URL not yet fetched, and the link as its parent page
showed it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Candidate:
    """A known, not yet fetched URL."""

    url_id: int
    url: str
    host: str
    depth: int
    score: float  # the link's estimated relevance, 0..1
    attempts: int = 0  # earlier tries that were put back (throttled, deferred)
    revisit: bool = False  # a fetched source, fetched again for what it published since
    # what the fetch that found it showed, for a URL read back from storage: the parent's
    # relevance (None: unknown, or a seed) and how many new URLs that fetch revealed
    parent_relevance: float | None = None
    revealed: int = 0
    # the words around the link where it was found, for a policy that learns from them
    # (None for a seed, a URL read back from storage, or one such a policy has queued)
    context: LinkContext | None = None


@dataclass(frozen=True, slots=True)
class LinkContext:
    """The link as its parent page showed it."""

    anchor: str = ""
    around: str = ""  # the text of the block holding the link
    parent_title: str = ""  # the parent's title and headings
