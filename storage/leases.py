"""Host leases and daemons: how several crawler daemons share one crawl.

A host is leased to one daemon at a time (`host_leases`: host, owner, expires_at in unix
seconds); only its holder reads the host's queued URLs and visits them. A lease is free
once it has expired, whoever held it. Claims are atomic: a new host's lease row is
inserted once (its primary key decides between daemons inserting it at once), and a free
lease is taken with `SELECT ... FOR UPDATE SKIP LOCKED` on PostgreSQL, so two daemons
never take the same one and neither waits for the other; SQLite has one writer at a
time, so the same statements are atomic there as they are. Every daemon writes a
heartbeat row (`daemons`) for `crawler status`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from sqlalchemy import Float, String, exists, func, literal, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from storage.models import URL_QUEUED, DaemonRow, HostLease, UrlRow
from storage.records import DaemonRecord
from storage.repository import _insert


def _has_queued(host_column: Any) -> Any:
    return exists().where(UrlRow.state == URL_QUEUED, UrlRow.host == host_column)


async def claim_hosts(
    connection: AsyncConnection, owner: str, *, now: float, until: float, limit: int
) -> list[str]:
    """Lease to `owner`, until `until`, up to `limit` hosts that have queued URLs and no
    live lease: first hosts never leased, then free ones. The hosts taken."""
    if limit <= 0:
        return []
    fresh = (
        select(UrlRow.host, literal(owner, String), literal(until, Float))
        .where(
            UrlRow.state == URL_QUEUED,
            ~exists().where(HostLease.host == UrlRow.host),
        )
        .group_by(UrlRow.host)
        .order_by(func.min(UrlRow.id))
        .limit(limit)
    )
    inserted = await connection.execute(
        _insert(connection, HostLease)
        .from_select(["host", "owner", "expires_at"], fresh)
        .on_conflict_do_nothing(index_elements=["host"])
        .returning(HostLease.host)
    )
    taken = list(inserted.scalars())
    if len(taken) >= limit:
        return taken
    free = (
        select(HostLease.host)
        .where(HostLease.expires_at < now, _has_queued(HostLease.host))
        .order_by(HostLease.expires_at)
        .limit(limit - len(taken))
        .with_for_update(skip_locked=True)
    )
    updated = await connection.execute(
        update(HostLease)
        .where(HostLease.host.in_(free.scalar_subquery()), HostLease.expires_at < now)
        .values(owner=owner, expires_at=until)
        .returning(HostLease.host)
    )
    return taken + list(updated.scalars())


async def renew_leases(connection: AsyncConnection, owner: str, *, until: float) -> list[str]:
    """Extend every lease `owner` still holds to `until`; the hosts it holds. A lease
    that expired and was not taken is still its own."""
    result = await connection.execute(
        update(HostLease)
        .where(HostLease.owner == owner)
        .values(expires_at=until)
        .returning(HostLease.host)
    )
    return list(result.scalars())


async def release_hosts(
    connection: AsyncConnection, owner: str, free_from: Mapping[str, float]
) -> None:
    """Give up `owner`'s leases of these hosts; each is free from the time given (its
    politeness delay after the last request, so its next holder keeps the delay)."""
    if not free_from:
        return
    for host, at in sorted(free_from.items()):
        await connection.execute(
            update(HostLease)
            .where(HostLease.host == host, HostLease.owner == owner)
            .values(owner=None, expires_at=at)
        )


async def release_all(connection: AsyncConnection, owner: str, *, free_from: float) -> None:
    """Give up every lease `owner` holds, free from `free_from`."""
    await connection.execute(
        update(HostLease).where(HostLease.owner == owner).values(owner=None, expires_at=free_from)
    )


async def held_hosts(connection: AsyncConnection, owner: str | None = None) -> dict[str, str]:
    """The hosts leased, to `owner` or to anyone, with their holders (expired leases
    included: they are held until taken)."""
    statement = select(HostLease.host, HostLease.owner).where(HostLease.owner.is_not(None))
    if owner is not None:
        statement = statement.where(HostLease.owner == owner)
    rows = (await connection.execute(statement)).all()
    return {host: holder for host, holder in rows if holder is not None}


async def any_queued(connection: AsyncConnection) -> bool:
    """Whether the crawl has a queued URL anywhere, on any daemon's hosts."""
    return bool(await connection.scalar(select(exists().where(UrlRow.state == URL_QUEUED))))


async def save_daemon(connection: AsyncConnection, daemon: DaemonRecord) -> None:
    """Write a daemon's heartbeat row."""
    statement = _insert(connection, DaemonRow)
    values = dataclasses.asdict(daemon)
    statement = statement.on_conflict_do_update(
        index_elements=["id"],
        set_={name: statement.excluded[name] for name in values if name != "id"},
    )
    await connection.execute(statement, [values])


async def load_daemons(connection: AsyncConnection) -> list[DaemonRecord]:
    """Every daemon that has worked on the crawl, the latest heartbeat first."""
    fields = [field.name for field in dataclasses.fields(DaemonRecord)]
    result = await connection.execute(
        select(*(getattr(DaemonRow, name) for name in fields)).order_by(
            DaemonRow.heartbeat_at.desc(), DaemonRow.id
        )
    )
    return [DaemonRecord(*row) for row in result.all()]


async def live_daemons(connection: AsyncConnection, *, since: float) -> int:
    """Daemons running: not stopped, with a heartbeat at `since` or later."""
    statement = select(func.count()).where(
        DaemonRow.stopped_at.is_(None), DaemonRow.heartbeat_at >= since
    )
    return int(await connection.scalar(statement) or 0)
