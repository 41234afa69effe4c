"""Database URLs as people type them, mapped to the async drivers the crawler runs on."""

from __future__ import annotations

from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

ACCEPTED_FORMS = (
    "sqlite:///PATH (or sqlite+aiosqlite:///PATH), a bare path such as crawl.db, "
    "postgresql://USER@HOST/DB (or postgres://, postgresql+asyncpg://)"
)
# each scheme a user may type, and the driver the crawler opens it with
ASYNC_DRIVERS = {
    "sqlite": "sqlite+aiosqlite",
    "sqlite+aiosqlite": "sqlite+aiosqlite",
    "postgresql": "postgresql+asyncpg",
    "postgres": "postgresql+asyncpg",
    "postgresql+asyncpg": "postgresql+asyncpg",
}


def database_url(typed: str) -> URL:
    """The URL the crawler opens for what a user typed: a SQLAlchemy URL with or without
    its async driver, or a bare path to a SQLite file. Anything else is a ValueError
    naming the accepted forms."""
    if typed and "://" not in typed:
        return URL.create("sqlite+aiosqlite", database=typed)
    scheme = typed.partition("://")[0].lower()
    if scheme not in ASYNC_DRIVERS:
        raise ValueError(f"not a database URL the crawler opens; give {ACCEPTED_FORMS}")
    try:
        url = make_url(typed)
    except ArgumentError as error:
        raise ValueError(f"{error}; give {ACCEPTED_FORMS}") from None
    return url.set(drivername=ASYNC_DRIVERS[scheme])
