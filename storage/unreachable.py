"""Which failures mean the database is away for a while, not that the work is wrong.

A PostgreSQL server restarting or failing over ends every session ("connection was
closed in the middle of operation") and refuses new ones (the socket is gone, the
connection is refused, "the database system is starting up"); a SQLite file another
process holds locked past the busy timeout is busy. Such a failure passes: the same
work, run again later, succeeds (`storage.retry`). A full disk, a read-only file or a
bad statement does not.

A connection such a failure left behind is unusable; asyncpg's "another operation is in
progress" is one used again. `mark_lost_connections`, on every engine, has SQLAlchemy
discard it, with the rest of its pool, so that the next checkout connects afresh.
"""

from __future__ import annotations

from collections.abc import Iterator

from sqlalchemy.engine import ExceptionContext

# PostgreSQL's SQLSTATEs of a session ended or refused: class 08 (connection exception),
# shut down by the administrator or a crash, not accepting connections yet (starting,
# stopping, recovering), all connection slots taken
LOST_STATES = ("08", "57P01", "57P02", "57P03", "53300")
# what asyncpg says of a connection that is closed or was left mid-operation
LOST_PHRASES = (
    "connection is closed",
    "connection was closed",
    "another operation is in progress",
    "cannot switch to state",
)


def is_unreachable(error: BaseException) -> bool:
    """Whether `error` says the database cannot be reached now (and may be later)."""
    return any(
        isinstance(cause, OSError) or _lost(cause) or _busy(cause) for cause in _causes(error)
    )


def mark_lost_connections(context: ExceptionContext) -> None:
    """SQLAlchemy's `handle_error` hook: a connection whose session ended is discarded,
    with its pool's others, even where the driver does not say it is closed."""
    if not context.is_disconnect and any(_lost(c) for c in _causes(context.original_exception)):
        context.is_disconnect = True


def _causes(error: BaseException) -> Iterator[BaseException]:
    """`error`, the driver's error SQLAlchemy wrapped, and what each was raised from
    (not what each was raised while handling: that may be anything)."""
    seen: set[int] = set()
    pending = [error]
    while pending and len(seen) < 16:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        for linked in (getattr(current, "orig", None), current.__cause__):
            if isinstance(linked, BaseException):
                pending.append(linked)


def _lost(error: BaseException) -> bool:
    if getattr(error, "connection_invalidated", False):
        return True
    state = getattr(error, "sqlstate", None) or getattr(error, "pgcode", None)
    if isinstance(state, str) and state.startswith(LOST_STATES):
        return True
    text = str(error)
    return any(phrase in text for phrase in LOST_PHRASES)


def _busy(error: BaseException) -> bool:
    """A SQLite file locked by another connection beyond the busy timeout."""
    return str(getattr(error, "sqlite_errorname", "")).startswith("SQLITE_BUSY")
