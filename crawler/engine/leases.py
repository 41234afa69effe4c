"""This daemon's share of a crawl that several daemons share through one PostgreSQL
database: the hosts it holds a lease of, renewed while held.

The URL rows are the authority: a URL is queued until a visit of it commits, so a
daemon killed with visits in flight leaves them queued, and whoever takes its hosts when
their leases expire fetches them. Only a host's holder reads its URLs back from the
database and visits them, so politeness holds across daemons. Every `interval` (a
quarter of the lease) a tick, in one transaction:

- renews the leases still held (one taken over after expiring is lost: its URLs leave
  memory);
- reads the census of the hosts with queued URLs that a daemon took within the last
  interval, or takes it: it reads every queued URL, so the daemons share one an
  interval, and the daemon that takes it gives each host found since the last its
  lease row, free to be claimed (the daemons' clocks agree, as the leases ask anyway);
- gives up the hosts with nothing queued and nothing in flight, and those beyond this
  daemon's share when others run (the census's hosts over the daemons alive),
  each free from the end of its politeness delay; a host beyond the share with visits
  in flight takes no new visit (it drains) and is given up by a tick that finds it idle;
- claims hosts with queued URLs up to the share: never leased ones, then free ones;
- counts the URLs queued for the hosts held (the frontier refills from them; other
  daemons add URLs to these hosts too) and whether any URL is queued anywhere (a daemon
  stops only when none is: a killed one's hosts may still come its way);
- writes this daemon's heartbeat.

A daemon dispatches to a host only while its lease has more than half its life left,
so a visit started just before a lost renewal ends before anyone else may take the host.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import socket
import time
import uuid
from collections.abc import Callable, Collection
from dataclasses import dataclass, field

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine

import storage
from crawler.errors import ConfigError
from crawler.fetch.deciding import REDIRECT_STATUSES

log = logging.getLogger(__name__)

TICKS_PER_LEASE = 4  # renewals within a lease's life


def default_daemon_id() -> str:
    host = "".join(c if c.isalnum() or c in "._-" else "-" for c in socket.gethostname())
    return f"{host.strip('.-_')[:48] or 'crawler'}-{uuid.uuid4().hex[:8]}"


@dataclass(slots=True)
class LeaseTick:
    """What a tick changed: hosts lost or given up, hosts claimed, and the URLs queued
    in the database for each host held."""

    lost: set[str] = field(default_factory=set)
    claimed: list[str] = field(default_factory=list)
    queued: dict[str, int] = field(default_factory=dict)


class HostLeases:
    def __init__(
        self,
        *,
        db: AsyncEngine,
        daemon_id: str,
        lease_seconds: float,
        cooldown: Callable[[str], float],
        wall_clock: Callable[[], float] = time.time,
        retry: storage.DatabaseRetry | None = None,
        pages_per_host: int | None = None,
    ) -> None:
        self.db = db
        # the per-host budget: a host at it has no work, though its URLs stay queued
        self.pages_per_host = pages_per_host
        self.retry = retry or storage.DatabaseRetry(db, patience=0.0)  # the database away
        self.daemon_id = daemon_id
        self.lease_seconds = lease_seconds
        self.cooldown = cooldown  # seconds a host must rest after its last request
        self.wall_clock = wall_clock
        self.expires: dict[str, float] = {}  # host -> its lease's end (unix seconds)
        self.crawl_has_work = True  # some URL is queued somewhere, as of the last tick
        self.claimed = 0  # hosts claimed, ever: hand-overs included
        self.started_at = wall_clock()
        self._ticking: set[str] | None = None  # during a tick: the hosts it keeps for sure
        # held beyond this daemon's share but busy: no new visit starts there, and the
        # next tick that finds them idle gives them up (a busy host is never given up,
        # and a host crawled fast is nearly always busy)
        self.draining: set[str] = set()
        # (hosts with queued URLs, when) as this daemon last counted them, if it did
        self.census: tuple[int, float] | None = None

    @property
    def interval(self) -> float:
        return self.lease_seconds / TICKS_PER_LEASE

    def __contains__(self, host: object) -> bool:
        """Whether this daemon holds `host` (its URLs belong in memory)."""
        return host in self.expires

    def __len__(self) -> int:
        return len(self.expires)

    def holds(self, host: str) -> bool:
        """Whether a visit to `host` may start: held, with half its lease left at least,
        not draining, and not a host a tick under way may give up (one without visits
        when it began)."""
        if self._ticking is not None and host not in self._ticking:
            return False
        if host in self.draining:
            return False
        expires = self.expires.get(host)
        return expires is not None and self.wall_clock() < expires - self.lease_seconds / 2

    async def join(self) -> None:
        """Say this daemon runs; a daemon of the same name running is an error."""
        now = self.wall_clock()
        async with self.db.begin() as connection:
            for daemon in await storage.load_daemons(connection):
                alive = daemon.stopped_at is None and daemon.heartbeat_at > now - self.lease_seconds
                if daemon.id == self.daemon_id and alive:
                    raise ConfigError(
                        f"setting 'daemon_id': {self.daemon_id!r} is in use by a daemon of "
                        f"this crawl (heartbeat {now - daemon.heartbeat_at:.0f} s ago); give "
                        "each daemon its own, or wait for a killed one's lease_seconds"
                    )
            await storage.save_daemon(connection, self._heartbeat(now, pages=0, rate=0.0))

    async def tick(self, *, busy: Collection[str], pages: int, rate: float) -> LeaseTick:
        """Renew, give up, claim, count (see the module's docstring). `busy`: the hosts
        with visits in flight, never given up. While the database is away the tick
        waits for it (`retry`), no visit starts but to `busy` hosts, and the leases run
        out unless it comes back: dispatching to their hosts stops (`holds`)."""
        self._ticking = set(busy)  # a visit started meanwhile would keep a host given up
        try:
            ticked = await self.retry.run(
                lambda: self._renew(busy, pages, rate), doing="renew host leases in"
            )
        except SQLAlchemyError as error:
            # the leases run out unless a later tick renews them: dispatching stops
            log.warning("cannot renew this daemon's host leases: %s", error)
            return LeaseTick()
        finally:
            self._ticking = None
        held, until, change, draining, queued = ticked
        self.draining = draining
        self.expires = dict.fromkeys(held, until)
        self.claimed += len(change.claimed)
        change.queued = {host: count for host, count in queued.items() if host in held}
        if change.lost or change.claimed:
            log.debug("leases: %d held, %d lost or given up", len(held), len(change.lost))
        return change

    async def _renew(
        self, busy: Collection[str], pages: int, rate: float
    ) -> tuple[set[str], float, LeaseTick, set[str], dict[str, int]]:
        """A tick's transaction, at the time it runs: (the hosts held, until when, what
        changed, the hosts draining, the URLs queued by host held)."""
        now = self.wall_clock()
        until = now + self.lease_seconds
        change = LeaseTick()
        async with self.db.begin() as connection:
            held = set(await storage.renew_leases(connection, self.daemon_id, until=until))
            change.lost = set(self.expires) - held
            wanted = await storage.latest_census(connection, since=now - self.interval)
            if wanted is None:
                await storage.register_hosts(connection)
                wanted = await storage.count_queued_hosts(connection)
                self.census = (wanted, now)
            await storage.save_daemon(connection, self._heartbeat(now, pages, rate))
            queued = await storage.count_queued_by_host(connection, self.daemon_id)
            alive = await storage.live_daemons(connection, since=now - self.lease_seconds)
            share = math.ceil(wanted / max(alive, 1))
            give_up = {h for h in held if h not in queued and h not in busy}
            spare = sorted(h for h in held - give_up if h not in busy)
            excess = max(len(held) - len(give_up) - share, 0)
            give_up.update(spare[:excess])
            # the rest of the excess is busy: the hosts with the fewest URLs left
            # stop taking visits, to be given up once idle
            busy_held = sorted(held - give_up - set(spare), key=lambda h: (queued.get(h, 0), h))
            draining = set(busy_held[: max(excess - len(spare), 0)])
            await storage.release_hosts(
                connection, self.daemon_id, {h: now + self.cooldown(h) for h in give_up}
            )
            held -= give_up
            wanted_more = 0 if self._settling() else share - len(held)
            change.claimed = await storage.claim_hosts(
                connection, self.daemon_id, now=now, until=until, limit=wanted_more
            )
            held.update(change.claimed)
            if change.claimed:
                queued = await storage.count_queued_by_host(connection, self.daemon_id)
            self.crawl_has_work = await storage.any_queued(
                connection, pages_per_host=self.pages_per_host, not_counted=REDIRECT_STATUSES
            )
        change.lost |= give_up
        return held, until, change, draining, queued

    def _settling(self) -> bool:
        """Whether the database came back too lately for this daemon to take hosts over.
        The other daemons were cut off too: their leases ran out while they could not
        renew them, and the pages they fetched before are not stored yet (their URLs
        still queued). Each renews within a lease tick and a retry's longest pause of
        the return, taking back its leases no one took; until then, a host taken over
        would have those pages fetched again."""
        if self.retry.away is not None:
            return True  # this tick is the first try to get through
        back = self.retry.back_at
        hold = self.lease_seconds + 2 * storage.LONGEST_PAUSE
        return back is not None and self.retry.clock() - back < hold

    async def leave(self, *, pages: int, rate: float) -> None:
        """A clean stop: every lease given up (free after the longest politeness delay
        among them), the heartbeat row marked stopped."""
        rest = max((self.cooldown(host) for host in self.expires), default=0.0)
        await self.retry.run(
            lambda: self._release_all(rest, pages, rate), doing="give up host leases in"
        )
        self.expires.clear()

    async def _release_all(self, rest: float, pages: int, rate: float) -> None:
        now = self.wall_clock()
        async with self.db.begin() as connection:
            await storage.release_all(connection, self.daemon_id, free_from=now + rest)
            record = self._heartbeat(now, pages, rate)
            await storage.save_daemon(connection, _stopped(record, now))

    def _heartbeat(self, now: float, pages: int, rate: float) -> storage.DaemonRecord:
        queued_hosts, counted_at = self.census or (None, None)
        return storage.DaemonRecord(
            id=self.daemon_id,
            started_at=self.started_at,
            heartbeat_at=now,
            pages=pages,
            hosts_held=len(self.expires),
            pages_per_second=rate,
            queued_hosts=queued_hosts,
            counted_at=counted_at,
        )


def _stopped(record: storage.DaemonRecord, at: float) -> storage.DaemonRecord:
    return dataclasses.replace(record, stopped_at=at, hosts_held=0)
