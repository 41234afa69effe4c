"""The database engine: SQLite (WAL, so exports read while a crawl writes) or PostgreSQL."""

from __future__ import annotations

import logging
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event, exc, inspect, pool, text
from sqlalchemy.engine.default import DefaultDialect
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.schema import CreateColumn

from storage.database_url import database_url
from storage.models import SCHEMA_VERSION, Base
from storage.search import create_search_index, drop_banded_search_index
from storage.unreachable import mark_lost_connections

log = logging.getLogger(__name__)

SQLITE_BUSY_TIMEOUT_MS = 10_000
CONNECT_TIMEOUT = 10.0  # seconds to reach a database server before saying it is unreachable
SCHEMA_LOCK = 7_310_017  # PostgreSQL advisory lock: daemons starting at once make it in turn
# Python's sqlite3 keeps each connection's last 128 prepared statements. A batch of N
# rows inserted, or a list of N values looked up, is a statement of its own for each N,
# and SQLite's program for a few hundred rows takes a few hundred KB: a connection that
# has seen many batch sizes holds tens of MB of them. Preparing a statement again costs
# less than the writer's batch it serves.
SQLITE_CACHED_STATEMENTS = 0
# A SQLite file's connections through aiosqlite, at most. Each is a thread with its own
# page cache and, with glibc, its own allocator arena, which keeps what it held after
# the thread ends. With SQLAlchemy's overflow of 10 beyond the pool's 5, the visits'
# reads (a redirect's target claimed, a host read back) opened a sixth connection at
# each burst and closed it when returned: a million-page crawl had opened 5,000 by its
# 650,000th page, up to 15 at once. Beyond these, a read waits its turn (at most
# SQLAlchemy's pool_timeout, 30 s).
SQLITE_CONNECTIONS = 5
# SQLAlchemy keeps each asyncpg connection's last 100 prepared statements, and with them
# PostgreSQL keeps their plans in that connection's server process. The same holds as
# for SQLite, at a greater size: 150 batch sizes of URLs added leave a server process
# 90 MB of plans (the crawl's pool holds up to 15 connections, each daemon its
# own pool). Each statement is prepared again instead.
POSTGRES_CACHED_STATEMENTS = 0


class StorageError(RuntimeError):
    """The database cannot be opened, read or written; the message says which and why."""


def open_engine(url: str) -> AsyncEngine:
    """An async engine for a database URL as a user types it (`storage.database_url`)."""
    try:
        parsed = database_url(url)
        options: dict[str, Any] = {}
        if parsed.get_backend_name() == "postgresql":
            # several daemons share the server: a broken connection is noticed, not used
            options = {
                "pool_pre_ping": True,
                "connect_args": {
                    "timeout": CONNECT_TIMEOUT,
                    "prepared_statement_cache_size": POSTGRES_CACHED_STATEMENTS,
                },
            }
        elif parsed.get_backend_name() == "sqlite":
            options = {"connect_args": {"cached_statements": SQLITE_CACHED_STATEMENTS}}
            # a file's pool; an in-memory database has one connection, shared
            dialect = parsed.get_dialect()
            if issubclass(dialect, DefaultDialect) and issubclass(
                dialect.get_pool_class(parsed), pool.QueuePool
            ):
                options |= {"pool_size": SQLITE_CONNECTIONS, "max_overflow": 0}
        engine = create_async_engine(parsed, **options)
    except (exc.ArgumentError, exc.NoSuchModuleError, ValueError) as error:
        raise StorageError(f"bad database URL {url!r}: {error}") from error
    if parsed.get_backend_name() == "sqlite":
        event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
    event.listen(engine.sync_engine, "handle_error", mark_lost_connections)
    return engine


def open_sync_engine(url: str) -> Engine:
    """A synchronous engine for a SQLite file's URL (its async driver's or not), for a
    thread that writes to it with plain calls (`storage.writes`)."""
    try:
        parsed = database_url(url)
    except ValueError as error:
        raise StorageError(f"bad database URL {url!r}: {error}") from error
    if parsed.get_backend_name() != "sqlite":
        raise StorageError(f"a synchronous engine is for SQLite, not {url!r}")
    engine = create_engine(
        parsed.set(drivername="sqlite"),
        connect_args={"cached_statements": SQLITE_CACHED_STATEMENTS},
    )
    event.listen(engine, "connect", _sqlite_pragmas)
    return engine


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    # WAL lets readers (export, status) run beside the one writer; NORMAL keeps every
    # committed transaction across a killed process (only power loss can cost the last).
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


TRANSIENT_STATES = {"40P01", "40001"}  # deadlock detected; serialization failure


def is_transient(error: BaseException) -> bool:
    """Whether a failed transaction may simply be run again: PostgreSQL chose it as a
    deadlock's victim (two daemons' transactions waiting on each other's rows) or could
    not serialize it."""
    original = getattr(error, "orig", None)
    state = getattr(original, "sqlstate", None) or getattr(original, "pgcode", None)
    return state in TRANSIENT_STATES


def is_shared(engine: AsyncEngine) -> bool:
    """Whether several daemons may share this database's crawl (PostgreSQL), each with
    leases of its hosts; SQLite has one daemon, which owns every host."""
    return engine.dialect.name == "postgresql"


async def create_schema(engine: AsyncEngine) -> None:
    """Make the crawler's tables, or bring an older version's up to date (new tables,
    nullable columns, indexes). A database made by a newer version, or one whose tables
    cannot be brought up to date, is an error before anything is written."""
    where = engine.url.render_as_string(hide_password=True)
    try:
        async with engine.begin() as connection:
            if is_shared(engine):
                await connection.execute(text(f"SELECT pg_advisory_xact_lock({SCHEMA_LOCK})"))
            recorded = await connection.run_sync(_schema_version)
            if recorded is not None and not recorded.isdigit():
                raise StorageError(
                    f"the database {where} records an unreadable schema version {recorded!r}"
                )
            found = None if recorded is None else int(recorded)
            if found is not None and found > SCHEMA_VERSION:
                raise StorageError(
                    f"the database {where} was made by a newer version of the crawler "
                    f"(schema {found}); this one reads schema {SCHEMA_VERSION} and older: "
                    "upgrade the crawler, or give another database"
                )
            await connection.run_sync(Base.metadata.create_all)
            await connection.run_sync(_add_missing_columns)
            # indexes added since a database's tables were made
            for table in Base.metadata.sorted_tables:
                for index in table.indexes:
                    await connection.run_sync(index.create, checkfirst=True)
            if found == 4:
                await connection.run_sync(drop_banded_search_index)
            await connection.run_sync(create_search_index)
            if found != SCHEMA_VERSION:
                await connection.run_sync(_record_schema_version)
    except (exc.SQLAlchemyError, OSError) as error:
        # OSError: a server that cannot be reached (refused, unknown host, timed out)
        raise StorageError(f"cannot prepare the database {where}: {error}") from error
    if found is not None and found < SCHEMA_VERSION:
        log.info("brought the database %s from schema %d to %d", where, found, SCHEMA_VERSION)


def _schema_version(connection: Connection) -> str | None:
    """The schema version the database's tables were made or last brought up to; None
    for a database without the crawler's tables. Databases made before the version was
    recorded are version 1."""
    inspector = inspect(connection)
    if not inspector.has_table("crawl_meta"):
        return "1" if inspector.has_table("urls") else None
    value = connection.execute(
        text("SELECT value FROM crawl_meta WHERE key = 'schema_version'")
    ).scalar()
    return "1" if value is None else str(value)


def _record_schema_version(connection: Connection) -> None:
    connection.execute(text("DELETE FROM crawl_meta WHERE key = 'schema_version'"))
    connection.execute(
        text("INSERT INTO crawl_meta (key, value) VALUES ('schema_version', :version)"),
        {"version": str(SCHEMA_VERSION)},
    )


def _add_missing_columns(connection: Connection) -> None:
    """Columns added since a database's tables were made; each is nullable, so the rows
    already there need no value."""
    inspector = inspect(connection)
    for table in Base.metadata.sorted_tables:
        present = {column["name"] for column in inspector.get_columns(table.name)}
        for column in table.columns:
            if column.name not in present:
                if not column.nullable:
                    raise StorageError(f"cannot add the required column {table.name}.{column.name}")
                definition = CreateColumn(column).compile(dialect=connection.dialect)
                connection.exec_driver_sql(f"ALTER TABLE {table.name} ADD COLUMN {definition}")
