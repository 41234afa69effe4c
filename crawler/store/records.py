"""What the stages hand the storage writer, and what it hands back once committed: a
page's write (made by the processor), the state of hosts, sources and learned models
(the checkpoints, the settlement), a sitemap's URLs, and the commits the frontier and
the re-visits learn from."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import storage
from crawler.fetch.exchange import Exchange
from policies import Candidate, LinkContext


@dataclass(frozen=True, slots=True)
class PageSignature:
    """What tells a later visit whether the page changed, and since when: its validators,
    a hash of its body and when it was fetched (unix seconds)."""

    etag: str | None = None
    last_modified: str | None = None
    fingerprint: str | None = None
    fetched_at: float | None = None


@dataclass(frozen=True, slots=True)
class PageWrite:
    candidate: Candidate
    record: storage.FetchRecord | None  # None: nothing new to record (304 Not Modified)
    links: Sequence[storage.NewUrl] = ()
    signature: PageSignature = PageSignature()
    reached: Sequence[storage.NewUrl] = ()  # the redirect targets the visit took on
    captures: Sequence[Exchange] = ()  # the page's answers, redirects included, to archive
    # how the page showed each link, by URL, for the frontier policy (not stored)
    contexts: Mapping[str, LinkContext] = field(default_factory=dict)
    # links in scope the page showed: `links`, and those left out as known already
    links_in_scope: int = 0
    # a relevant page's links known already, to rank higher where queued below it
    raise_known: storage.ScoreRaise | None = None


@dataclass(frozen=True, slots=True)
class Committed:
    """A written page and the URLs it revealed that were new."""

    write: PageWrite
    new_urls: list[storage.QueuedUrl] = field(default_factory=list)
    dropped: list[int] = field(default_factory=list)  # queued URLs a redirect reached
    raised: list[int] = field(default_factory=list)  # queued URLs raised to `raise_known`


@dataclass(frozen=True, slots=True)
class StateWrite:
    hosts: Sequence[storage.HostRecord] = ()
    sources: Sequence[storage.SourceRecord] = ()
    learned: dict[str, bytes] = field(default_factory=dict)
    timeline: Sequence[storage.TimelineSample] = ()
    captures: Sequence[Exchange] = ()  # answers no page row points at (robots.txt, retries)


@dataclass(frozen=True, slots=True)
class SitemapWrite:
    """A sitemap's page URLs, with its host's record, which says the sitemap is read: a
    resumed crawl neither misses its URLs nor reads it again."""

    links: Sequence[storage.NewUrl] = ()
    hosts: Sequence[storage.HostRecord] = ()
    captures: Sequence[Exchange] = ()  # its answer, archived in the same batch


@dataclass(frozen=True, slots=True)
class SitemapCommitted:
    """A written sitemap and the URLs it gave that were new."""

    write: SitemapWrite
    new_urls: list[storage.QueuedUrl] = field(default_factory=list)


WriteItem = PageWrite | StateWrite | SitemapWrite
