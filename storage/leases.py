"""Host leases and daemons: how several crawler daemons share one crawl.

A host is leased to one daemon at a time (`host_leases`: host, owner, expires_at in unix
seconds); only its holder reads the host's queued URLs and visits them. A lease is free
once it has expired, whoever held it. A host with queued URLs gets its lease row at a
census (`register_hosts`), free since 0, inserted once (its primary key decides between
daemons inserting it at once). Claims are atomic: a free lease is taken with `SELECT ...
FOR UPDATE SKIP LOCKED` on PostgreSQL, so two daemons never take the same one and
neither waits for the other; SQLite has one writer at a time, so the same statements
are atomic there as they are. Every daemon writes a heartbeat row (`daemons`) for
`crawler status`, with its last census of the hosts with queued URLs: the census reads
every queued URL, and the other daemons reuse a recent one (`latest_census`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping
from typing import Any

from sqlalchemy import Float, String, exists, func, literal, select, true, update
from sqlalchemy.ext.asyncio import AsyncConnection

from storage.dialects import conflict_insert
from storage.models import URL_DONE, URL_QUEUED, DaemonRow, HostLease, UrlRow
from storage.records import DaemonRecord


def _has_queued(host_column: Any) -> Any:
    return exists().where(UrlRow.state == URL_QUEUED, UrlRow.host == host_column)


async def register_hosts(connection: AsyncConnection) -> int:
    """Give each host with queued URLs and no lease row a free lease (no owner, free
    since 0, before any lease given up): the hosts found since the last census. The
    number registered."""
    fresh = (
        select(UrlRow.host, literal(None, String), literal(0.0, Float))
        .where(UrlRow.state == URL_QUEUED, ~exists().where(HostLease.host == UrlRow.host))
        .distinct()
    )
    inserted = await connection.execute(
        conflict_insert(connection, HostLease)
        .from_select(["host", "owner", "expires_at"], fresh)
        .on_conflict_do_nothing(index_elements=["host"])
        .returning(HostLease.host)
    )
    return len(inserted.all())


async def latest_census(connection: AsyncConnection, *, since: float) -> int | None:
    """The hosts with queued URLs as a daemon last counted them, at `since` or later;
    None if none did."""
    statement = (
        select(DaemonRow.queued_hosts)
        .where(DaemonRow.counted_at >= since, DaemonRow.queued_hosts.is_not(None))
        .order_by(DaemonRow.counted_at.desc())
        .limit(1)
    )
    return await connection.scalar(statement)


async def claim_hosts(
    connection: AsyncConnection, owner: str, *, now: float, until: float, limit: int
) -> list[str]:
    """Lease to `owner`, until `until`, up to `limit` free hosts (registered, with no
    live lease) that have queued URLs: those free the longest first, so hosts never
    leased before hosts given up. The hosts taken."""
    if limit <= 0:
        return []
    free = (
        select(HostLease.host)
        .where(HostLease.expires_at < now, _has_queued(HostLease.host))
        .order_by(HostLease.expires_at)
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    updated = await connection.execute(
        update(HostLease)
        .where(HostLease.host.in_(free.scalar_subquery()), HostLease.expires_at < now)
        .values(owner=owner, expires_at=until)
        .returning(HostLease.host)
    )
    return list(updated.scalars())


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


async def any_queued(
    connection: AsyncConnection,
    *,
    pages_per_host: int | None = None,
    not_counted: Collection[int] = (),
) -> bool:
    """Whether the crawl has a queued URL anywhere, on any daemon's hosts; with
    `pages_per_host`, on a host with fewer pages than that (a page: a URL visited whose
    host answered, statuses in `not_counted` left out, as `pages_by_host` counts them):
    the URLs of a host at its budget are left queued, and are no work."""
    queued = UrlRow.state == URL_QUEUED
    if pages_per_host is None:
        return bool(await connection.scalar(select(exists().where(queued))))
    full = (
        select(UrlRow.host)
        .where(
            UrlRow.state == URL_DONE,
            UrlRow.status.is_not(None),
            UrlRow.status.not_in(not_counted) if not_counted else true(),
        )
        .group_by(UrlRow.host)
        .having(func.count() >= pages_per_host)
    )
    return bool(await connection.scalar(select(exists().where(queued, UrlRow.host.not_in(full)))))


async def save_daemon(connection: AsyncConnection, daemon: DaemonRecord) -> None:
    """Write a daemon's heartbeat row."""
    statement = conflict_insert(connection, DaemonRow)
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
