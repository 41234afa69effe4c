"""The collection's tables. One row per URL: the frontier and the fetched pages alike."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    SmallInteger,
    String,
    Text,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

# The tables' version, recorded in crawl_meta. Raise it with every change to them; a
# change an older database cannot be brought to (a required column, a changed type)
# needs a step of its own in storage.database.create_schema.
SCHEMA_VERSION = 5

URL_QUEUED = 0  # in the frontier
URL_DONE = 1  # fetched, failed for good, or refused
URL_REACHED = 2  # fetched as another URL's redirect target; that URL's row has the page


class Base(DeclarativeBase):
    pass


class UrlRow(Base):
    __tablename__ = "urls"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    url: Mapped[str] = mapped_column(Text, unique=True)
    host: Mapped[str] = mapped_column(String(300), index=True)
    depth: Mapped[int] = mapped_column(Integer)
    discovered_from: Mapped[str | None] = mapped_column(Text)
    score: Mapped[float] = mapped_column(Float)  # the link's estimated relevance
    state: Mapped[int] = mapped_column(SmallInteger, default=URL_QUEUED)
    final_url: Mapped[str | None] = mapped_column(Text)
    # the canonical URL the page is stored under, which its row holds for it
    # (crawler.process.canonical); that URL's own row is reached, like a redirect's target
    canonical_url: Mapped[str | None] = mapped_column(Text)
    status: Mapped[int | None] = mapped_column(Integer)
    content_type: Mapped[str | None] = mapped_column(String(200))
    content_length: Mapped[int | None] = mapped_column(Integer)
    relevance: Mapped[float | None] = mapped_column(Float)
    title: Mapped[str | None] = mapped_column(Text)
    fetched_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    fetch_count: Mapped[int] = mapped_column(Integer, default=0)
    error: Mapped[str | None] = mapped_column(String(40))
    # where the last capture of this URL is: a WARC file's name and the record's offset
    warc_file: Mapped[str | None] = mapped_column(String(200))
    warc_offset: Mapped[int | None] = mapped_column(BigInteger)
    # the main text's SimHash (as a signed 64-bit number), and the id of the stored
    # page it is a near-duplicate of (crawler.process.near_duplicates)
    simhash: Mapped[int | None] = mapped_column(BigInteger)
    near_duplicate_of: Mapped[int | None] = mapped_column(Integer)
    language: Mapped[str | None] = mapped_column(String(8))  # ISO 639-1, of the main text

    __table_args__ = (
        Index("ix_urls_state_id", "state", "id"),
        # reloading a spilled frontier in its order
        Index("ix_urls_state_score", "state", "score", "depth"),
        Index("ix_urls_state_depth", "state", "depth"),
        # the hosts with queued URLs, for a daemon claiming hosts of a shared crawl
        Index("ix_urls_state_host", "state", "host"),
        # the new URLs a page revealed, for a refill a frontier policy ranks itself
        Index("ix_urls_discovered_from", "discovered_from"),
        # the fetched pages nearest a relevance, for the pages worth labelling
        # (storage.labels); the frontier's URLs, with none, stay out of it
        Index(
            "ix_urls_relevance",
            "relevance",
            sqlite_where=text("relevance IS NOT NULL"),
            postgresql_where=text("relevance IS NOT NULL"),
        ),
    )


class PageText(Base):
    """The main text of a fetched page, zlib-compressed. The search index
    (`storage.search`, made outside these tables: FTS5 has no SQLAlchemy table) holds
    it again, uncompressed."""

    __tablename__ = "page_texts"

    url_id: Mapped[int] = mapped_column(ForeignKey("urls.id"), primary_key=True)
    text: Mapped[bytes] = mapped_column(LargeBinary)


class LabelRow(Base):
    """A user's judgement of a stored page: relevant to the topic or not. The topic
    model learns from these (`policies.relevance.labels`)."""

    __tablename__ = "labels"

    url_id: Mapped[int] = mapped_column(ForeignKey("urls.id"), primary_key=True)
    relevant: Mapped[bool] = mapped_column(Boolean)
    labelled_at: Mapped[float] = mapped_column(Float)  # unix seconds


class HostRow(Base):
    """What the crawler knows and owes each host: robots.txt and politeness state."""

    __tablename__ = "hosts"

    host: Mapped[str] = mapped_column(String(300), primary_key=True)
    robots_status: Mapped[int | None] = mapped_column(Integer)
    robots_body: Mapped[str | None] = mapped_column(Text)
    robots_fetched_at: Mapped[float | None] = mapped_column(Float)  # unix seconds
    backoff: Mapped[float] = mapped_column(Float, default=1.0)
    failures: Mapped[int] = mapped_column(Integer, default=0)
    not_before: Mapped[float] = mapped_column(Float, default=0.0)  # unix seconds
    # which of its sitemaps are read and left to read (JSON; crawler.fetch.sitemaps)
    sitemaps: Mapped[str | None] = mapped_column(Text)


class LearnedState(Base):
    """Learned models' state, by name (e.g. the relevance model's frequencies)."""

    __tablename__ = "learned_state"

    name: Mapped[str] = mapped_column(String(100), primary_key=True)
    state: Mapped[bytes] = mapped_column(LargeBinary)


class CrawlMeta(Base):
    """Settings a crawl was started with, e.g. its topic and relevance threshold."""

    __tablename__ = "crawl_meta"

    key: Mapped[str] = mapped_column(String(100), primary_key=True)
    value: Mapped[str] = mapped_column(Text)


class TimelineRow(Base):
    """What the crawler's counters and gauges read at one moment (JSON), for reports."""

    __tablename__ = "timeline"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    taken_at: Mapped[float] = mapped_column(Float, index=True)  # unix seconds
    values: Mapped[str] = mapped_column(Text)


class SourceRow(Base):
    """A page that keeps publishing new links, re-visited on a schedule, and what its
    re-visits have found so far (the rates are estimated from these totals)."""

    __tablename__ = "sources"

    url_id: Mapped[int] = mapped_column(ForeignKey("urls.id"), primary_key=True)
    url: Mapped[str] = mapped_column(Text)
    host: Mapped[str] = mapped_column(String(300))
    depth: Mapped[int] = mapped_column(Integer)
    last_visit: Mapped[float] = mapped_column(Float)  # unix seconds
    visits: Mapped[int] = mapped_column(Integer, default=0)  # re-visits, the first excluded
    items: Mapped[int] = mapped_column(Integer, default=0)  # new links they found
    exposure: Mapped[float] = mapped_column(Float, default=0.0)  # seconds they covered
    changes: Mapped[int] = mapped_column(Integer, default=0)  # re-visits finding a change
    worth_total: Mapped[float] = mapped_column(Float, default=0.0)  # relevance of items
    worth_items: Mapped[int] = mapped_column(Integer, default=0)  # items fetched and scored
    etag: Mapped[str | None] = mapped_column(Text)
    last_modified: Mapped[str | None] = mapped_column(Text)
    fingerprint: Mapped[str | None] = mapped_column(String(64))


class WarcFileRow(Base):
    """A WARC file written by the crawl, and how many of its bytes hold records whose
    rows committed: a killed crawl's open file is cut back to this length."""

    __tablename__ = "warc_files"

    name: Mapped[str] = mapped_column(String(200), primary_key=True)
    committed_bytes: Mapped[int] = mapped_column(BigInteger)


class HostLease(Base):
    """Which daemon of a shared crawl holds a host, until when (unix seconds). A host is
    free once its lease has expired, whoever held it; a clean release leaves no owner
    and an expiry a politeness delay away."""

    __tablename__ = "host_leases"

    host: Mapped[str] = mapped_column(String(300), primary_key=True)
    owner: Mapped[str | None] = mapped_column(String(100), index=True)
    # free leases are claimed in the order they came free: the first of them found
    # without going through the leases held
    expires_at: Mapped[float] = mapped_column(Float, default=0.0, index=True)


class DaemonRow(Base):
    """A crawler daemon that has worked on this crawl, and its last heartbeat."""

    __tablename__ = "daemons"

    id: Mapped[str] = mapped_column(String(100), primary_key=True)
    started_at: Mapped[float] = mapped_column(Float)  # unix seconds
    heartbeat_at: Mapped[float] = mapped_column(Float)
    stopped_at: Mapped[float | None] = mapped_column(Float)  # None: running, or killed
    pages: Mapped[int] = mapped_column(Integer, default=0)  # visits it stored, this run
    hosts_held: Mapped[int] = mapped_column(Integer, default=0)
    pages_per_second: Mapped[float] = mapped_column(Float, default=0.0)
    # its last census of the hosts with queued URLs, which the other daemons reuse
    queued_hosts: Mapped[int | None] = mapped_column(Integer)
    counted_at: Mapped[float | None] = mapped_column(Float)  # unix seconds
