"""The collection in SQL (SQLAlchemy 2, async): SQLite by default, PostgreSQL when shared."""

from storage.database import StorageError, create_schema, open_engine
from storage.records import (
    CrawlStatus,
    ExportRecord,
    FetchRecord,
    HostRecord,
    NewUrl,
    QueuedUrl,
)
from storage.repository import (
    add_urls,
    crawl_status,
    get_meta,
    iter_export,
    iter_queued,
    load_hosts,
    load_learned_state,
    page_text,
    record_fetches,
    save_hosts,
    save_learned_state,
    set_meta,
    utc_now,
)

__all__ = [
    "CrawlStatus",
    "ExportRecord",
    "FetchRecord",
    "HostRecord",
    "NewUrl",
    "QueuedUrl",
    "StorageError",
    "add_urls",
    "crawl_status",
    "create_schema",
    "get_meta",
    "iter_export",
    "iter_queued",
    "load_hosts",
    "load_learned_state",
    "open_engine",
    "page_text",
    "record_fetches",
    "save_hosts",
    "save_learned_state",
    "set_meta",
    "utc_now",
]
