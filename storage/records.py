"""Plain records that cross the storage boundary; SQLAlchemy objects never leave it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime


@dataclass(frozen=True, slots=True)
class NewUrl:
    url: str
    host: str
    depth: int
    score: float
    discovered_from: str | None = None


@dataclass(frozen=True, slots=True)
class ScoreRaise:
    """Known URLs a relevant page links to: each still queued with a lower score rises
    to `score`."""

    urls: tuple[str, ...]
    score: float


@dataclass(frozen=True, slots=True)
class QueuedUrl:
    id: int
    url: str
    host: str
    depth: int
    score: float
    # what the fetch that found it showed (read for a refill the policy ranks itself)
    parent_relevance: float | None = None  # None: a seed, or unknown
    revealed: int = 0  # new URLs that fetch revealed


@dataclass(frozen=True, slots=True)
class FetchRecord:
    """The outcome of fetching one URL, written in the same transaction as its links."""

    url_id: int
    final_url: str | None
    status: int | None
    content_type: str | None
    content_length: int | None
    relevance: float | None
    title: str | None
    fetched_at: datetime
    error: str | None
    text: str | None = None
    canonical_url: str | None = None  # the canonical URL the page is stored under
    warc_file: str | None = None  # the capture's WARC file, if one was written
    warc_offset: int | None = None  # its record's offset in that file
    simhash: int | None = None  # the main text's SimHash, unsigned
    near_duplicate_of: int | None = None  # the id of the stored page it nearly repeats
    language: str | None = None  # ISO 639-1


@dataclass(frozen=True, slots=True)
class HostRecord:
    host: str
    robots_status: int | None = None
    robots_body: str | None = None
    robots_fetched_at: float | None = None
    backoff: float = 1.0
    failures: int = 0
    not_before: float = 0.0
    sitemaps: str | None = None  # sitemaps' plan, JSON (crawler.fetch.sitemaps); None: not begun


@dataclass(frozen=True, slots=True)
class TimelineSample:
    taken_at: float  # unix seconds
    values: dict  # JSON-able: names to numbers, or to mappings of them


@dataclass(frozen=True, slots=True)
class ExportRecord:
    url: str
    final_url: str | None
    host: str
    status: int | None
    content_type: str | None
    relevance: float | None
    title: str | None
    depth: int
    discovered_from: str | None
    fetched_at: datetime | None
    fetch_count: int
    error: str | None
    canonical_url: str | None = None  # the URL the page is stored under (its row holds it)
    warc_file: str | None = None
    warc_offset: int | None = None
    near_duplicate_of: str | None = None  # the URL of the stored page it nearly repeats
    language: str | None = None  # ISO 639-1
    text: str | None = None  # the page's main text, when asked for


@dataclass(frozen=True, slots=True)
class SearchHit:
    """A stored page matching a search, and how well (`storage.search`)."""

    url: str
    title: str | None
    host: str
    relevance: float | None
    score: float  # the text match blended with the relevance, at most 1
    text_rank: float  # BM25 on SQLite, ts_rank_cd on PostgreSQL
    snippet: str  # a passage of the text, the query's words marked [like this]


@dataclass(frozen=True, slots=True)
class CrawlStatus:
    pages: int
    relevant_pages: int
    relevance_threshold: float
    frontier: int
    hosts: int
    errors: dict[str, int] = field(default_factory=dict)
    sources: int = 0  # pages re-visited for what they publish
    revisits: int = 0
    revisit_items: int = 0  # new URLs the re-visits found
    requests_per_page: float | None = None  # HTTP requests sent for each visit stored
    daemons: list[DaemonRecord] = field(default_factory=list)  # of a shared crawl


@dataclass(frozen=True, slots=True)
class SourceRecord:
    """A re-visited source and the totals its rates are estimated from."""

    url_id: int
    url: str
    host: str
    depth: int
    last_visit: float  # unix seconds
    visits: int = 0
    items: int = 0
    exposure: float = 0.0  # seconds
    changes: int = 0
    worth_total: float = 0.0
    worth_items: int = 0
    etag: str | None = None
    last_modified: str | None = None
    fingerprint: str | None = None


@dataclass(frozen=True, slots=True)
class DaemonRecord:
    """A daemon of a shared crawl, as its last heartbeat left it."""

    id: str
    started_at: float  # unix seconds
    heartbeat_at: float
    stopped_at: float | None = None  # None: running, or killed before it could say
    pages: int = 0
    hosts_held: int = 0
    pages_per_second: float = 0.0
    queued_hosts: int | None = None  # its last census of the hosts with queued URLs
    counted_at: float | None = None  # when it took it
