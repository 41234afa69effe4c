"""What differs between SQLite and PostgreSQL in the writes: the INSERT that takes an ON
CONFLICT clause, and the order rows are written in."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection


def lock_order(
    connection: Connection | AsyncConnection, rows: list[dict[str, Any]], key: str
) -> None:
    """On PostgreSQL, rows are written in the order of their key, so that two daemons'
    transactions writing some of the same rows lock them in the same order and neither
    waits for the other in a cycle (a deadlock). SQLite has one writer: order kept."""
    if connection.dialect.name == "postgresql":
        rows.sort(key=lambda row: row[key])


def conflict_insert(connection: Connection | AsyncConnection, table: Any) -> Any:
    """An INSERT into `table` in the connection's dialect, which takes ON CONFLICT."""
    return dialect_insert(connection.dialect.name, table)


def dialect_insert(dialect: str, table: Any) -> Any:
    if dialect == "postgresql":
        return postgresql.insert(table)
    if dialect == "sqlite":
        return sqlite.insert(table)
    raise NotImplementedError(f"unsupported database dialect {dialect!r}")
