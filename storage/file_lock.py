"""One crawl at a time on a SQLite file: an OS lock on a file beside it.

While a crawl runs, `crawl.db.lock` holds an exclusive flock(2) and names the crawl's
process and host. The kernel releases the lock when the process ends, however it ends
(`kill -9` too), so a killed crawl never keeps the next one out. The file stays in
place: removing it while another process has it open would let two crawls hold two
locks. What only reads the database (status, export, report) takes no lock: SQLite's
WAL lets it read beside the crawl.

fcntl, not the `filelock` package: its flock records no holder to name, and where
flock is missing it falls back to a marker file that a killed process leaves behind.
"""

from __future__ import annotations

import errno
import fcntl
import os
import socket
from urllib.parse import unquote, urlsplit

from sqlalchemy.engine import URL
from sqlalchemy.ext.asyncio import AsyncEngine

from storage.database import StorageError

LOCK_SUFFIX = ".lock"
READ_ONLY = {errno.EACCES, errno.EPERM, errno.EROFS}


class CrawlFileLock:
    """A crawl's hold on its SQLite file, until `release` or the process's end."""

    def __init__(self, descriptor: int, path: str) -> None:
        self._descriptor = descriptor
        self.path = path

    def release(self) -> None:
        os.ftruncate(self._descriptor, 0)  # names no holder once it is free
        os.close(self._descriptor)  # and the lock goes with it


def lock_for_crawl(engine: AsyncEngine) -> CrawlFileLock | None:
    """Hold the SQLite file of `engine` for this process's crawl; None for a database
    without a file of its own (PostgreSQL, which daemons share; SQLite in memory).
    A file another crawl holds is an error naming the file and the holder."""
    database = _file_of(engine.url)
    if database is None:
        return None
    path = database + LOCK_SUFFIX
    try:
        descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as error:
        why = "is read-only here" if error.errno in READ_ONLY else "cannot be locked"
        raise StorageError(
            f"the database {database} {why}: cannot open its lock file {path}: {error.strerror}"
        ) from error
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _holder(descriptor)
        os.close(descriptor)
        raise StorageError(
            f"the database {database} is in use by another crawl ({holder}, which holds "
            f"{path}): stop it, or give another database"
        ) from None
    except OSError:
        os.close(descriptor)
        raise
    os.ftruncate(descriptor, 0)
    os.write(descriptor, f"{os.getpid()} {socket.gethostname()}\n".encode())
    return CrawlFileLock(descriptor, path)


def _file_of(url: URL) -> str | None:
    """The database file a SQLite URL names; None for another database or memory."""
    database = url.database
    if url.get_backend_name() != "sqlite" or database in (None, "", ":memory:"):
        return None
    if database.startswith("file:") and url.query.get("uri"):  # a URI filename
        parts = urlsplit(database)
        return None if "mode=memory" in parts.query else unquote(parts.path) or None
    return database


def _holder(descriptor: int) -> str:
    """The holder the lock file names, as 'pid 12 on host'."""
    recorded = os.pread(descriptor, 1024, 0).decode(errors="replace").split()
    if len(recorded) != 2:  # the holder has not written itself yet
        return "a process not yet named in the lock file"
    pid, host = recorded
    return f"pid {pid} on {host}"
