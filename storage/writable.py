"""Whether a crawl can write its SQLite file, asked before anything is written: a file,
directory or mount that is read-only would otherwise fail the crawl at its first write."""

from __future__ import annotations

from sqlalchemy import exc
from sqlalchemy.ext.asyncio import AsyncEngine

from storage.database import StorageError


async def check_writable(engine: AsyncEngine) -> None:
    """A SQLite database the crawl cannot write is an error, in one line naming the file.
    Other databases say so when their tables are prepared."""
    if engine.dialect.name != "sqlite":
        return
    path = engine.url.database
    try:
        async with engine.connect() as connection:
            version = (await connection.exec_driver_sql("PRAGMA user_version")).scalar()
            # the header's field written back as it is: a write that changes nothing
            await connection.exec_driver_sql(f"PRAGMA user_version = {int(version or 0)}")
    except exc.DBAPIError as error:
        reason = error.orig
        if getattr(reason, "sqlite_errorname", "").startswith("SQLITE_READONLY"):
            raise StorageError(
                f"the database {path} is read-only ({reason}): a crawl writes the file, "
                "and its -wal and -shm files beside it"
            ) from error
        raise StorageError(f"cannot write the database {path}: {reason}") from error
