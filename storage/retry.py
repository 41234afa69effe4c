"""Riding out a database that is away for a while (`storage.unreachable`): every read
and write of a running crawl goes through one `DatabaseRetry`.

An operation that fails because the database cannot be reached is run again, whole,
after a pause that doubles from FIRST_PAUSE to LONGEST_PAUSE, each drawn between half
and all of it so that tasks and daemons do not all come back at once. Once the database
has been away for `patience` seconds (the crawl's `db_outage_seconds`) the operation
fails with `DatabaseAway`, a StorageError that names the database: the crawl stops. A
transaction PostgreSQL rolled back to end a deadlock is run again too, up to
DEADLOCK_TRIES times. Any other failure is the caller's at once.

Each operation must be safe to run again whole: a transaction is rolled back when its
connection is lost, but one lost at its commit may have committed (`storage.writes`
are written so that running them twice writes nothing twice).

While an operation waits for the database, `away` says since when and why (/healthz
says the crawl is degraded); the first operation that succeeds ends the outage.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from sqlalchemy.ext.asyncio import AsyncEngine

from storage.database import StorageError, is_transient
from storage.unreachable import is_unreachable

log = logging.getLogger(__name__)

T = TypeVar("T")

FIRST_PAUSE = 0.05  # seconds before the first try again
LONGEST_PAUSE = 2.0  # seconds between tries, at most: a database back is found soon
DEADLOCK_TRIES = 8  # tries of a transaction PostgreSQL rolled back to end a deadlock
DEADLOCK_PAUSE = 0.05  # seconds, times the tries so far, at most between them


class DatabaseAway(StorageError):
    """The database was away longer than the crawl waits for it: the crawl's end."""


@dataclass(frozen=True, slots=True)
class Outage:
    """The database away: since when (the retry's clock) and its last error, in a line."""

    since: float
    error: str


class DatabaseRetry:
    def __init__(
        self,
        db: AsyncEngine,
        *,
        patience: float,
        on_retry: Callable[[], None] = lambda: None,
        clock: Callable[[], float] = time.monotonic,
        random_state: random.Random | None = None,
    ) -> None:
        self.where = db.url.render_as_string(hide_password=True)
        self.patience = patience  # seconds the database may be away
        self.on_retry = on_retry  # an operation is run again
        self.clock = clock
        self._random = random_state or random.Random()
        self.away: Outage | None = None
        self.back_at: float | None = None  # when the database was last found back

    async def run(self, operation: Callable[[], Awaitable[T]], *, doing: str) -> T:
        """`operation()`'s result, run again while the database is away (see the
        module's docstring). `doing`: what it does, for the error ("write to")."""
        pause = FIRST_PAUSE
        deadlocks = 0
        while True:
            started = self.clock()
            try:
                result = await operation()
            except Exception as error:
                if is_transient(error) and deadlocks < DEADLOCK_TRIES - 1:
                    # another daemon's transaction and this one waited on each other's
                    # rows; this one was rolled back whole
                    deadlocks += 1
                    log.info("a transaction met a deadlock (%d); again", deadlocks)
                    self.on_retry()
                    await asyncio.sleep(self._random.uniform(0.0, DEADLOCK_PAUSE * deadlocks))
                    continue
                if not is_unreachable(error):
                    raise
                outage = self._failed(error, started)
                waited = self.clock() - outage.since
                if waited >= self.patience:
                    raise DatabaseAway(
                        f"cannot {doing} the database {self.where}: away for {waited:.0f} s, "
                        f"longer than db_outage_seconds ({self.patience:g} s) allows; "
                        f"last error: {outage.error}"
                    ) from error
                self.on_retry()
                wait = self._random.uniform(pause / 2, pause)
                log.debug("cannot %s the database (%s); again in %.2f s", doing, outage.error, wait)
                await asyncio.sleep(min(wait, self.patience - waited))
                pause = min(pause * 2, LONGEST_PAUSE)
                continue
            self._reached()
            return result

    def _failed(self, error: Exception, started: float) -> Outage:
        """Note the database away since `started` (the failed try began then: a SQLite
        lock is waited for before it fails), with `error` as its last word."""
        message = one_line(error)
        if self.away is None:
            log.warning(
                "the database %s is away (%s); trying again for up to %g s",
                self.where,
                message,
                self.patience,
            )
            self.away = Outage(started, message)
        else:
            self.away = Outage(self.away.since, message)
        return self.away

    def _reached(self) -> None:
        if self.away is not None:
            log.info(
                "the database %s is back after %.1f s", self.where, self.clock() - self.away.since
            )
            self.away = None
            self.back_at = self.clock()


def one_line(error: BaseException) -> str:
    """The driver's error and message, without SQLAlchemy's statement and link."""
    original = getattr(error, "orig", None) or error
    driver = original.__cause__ or original  # asyncpg's, under SQLAlchemy's adapter
    lines = str(driver).strip().splitlines()
    return f"{type(driver).__name__}: {lines[0]}" if lines else type(driver).__name__
