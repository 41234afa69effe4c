"""The frontier as stored: queued URLs read back in the frontier's orders, by host or
for the hosts a daemon holds, and counted by host. Each function takes an async
connection and returns plain records."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from typing import Any

from sqlalchemy import exists, func, select, true
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.orm import aliased

from storage.models import URL_QUEUED, HostLease, UrlRow
from storage.records import QueuedUrl


def _held_by(owner: str | None) -> Any:
    """Only the URLs of the hosts `owner` holds a lease of (None: every URL)."""
    if owner is None:
        return true()
    return UrlRow.host.in_(select(HostLease.host).where(HostLease.owner == owner))


async def iter_queued(
    connection: AsyncConnection, *, batch_size: int = 10_000
) -> AsyncIterator[list[QueuedUrl]]:
    """The frontier as stored, in batches (to rebuild it on resume)."""
    last_id = 0
    while True:
        result = await connection.execute(
            select(UrlRow.id, UrlRow.url, UrlRow.host, UrlRow.depth, UrlRow.score)
            .where(UrlRow.state == URL_QUEUED, UrlRow.id > last_id)
            .order_by(UrlRow.id)
            .limit(batch_size)
        )
        batch = [QueuedUrl(*row) for row in result.all()]
        if not batch:
            return
        yield batch
        last_id = batch[-1].id


async def queued_by_share(
    connection: AsyncConnection,
    *,
    by_score: bool,
    share: int,
    batch_size: int,
    owner: str | None = None,
) -> AsyncGenerator[list[QueuedUrl], None]:
    """Queued URLs in the frontier's order (highest score first with `by_score`, else
    shallowest first; ties to the shallower, then by id): first each host's best `share`,
    then the rest. The database ranks every host's URLs at once and hands them over in
    batches, so a caller that stops early reads no further; with `owner`, only the URLs
    of the hosts it holds."""

    def in_order(urls: Any) -> tuple[Any, ...]:
        return (urls.score.desc(), urls.depth, urls.id) if by_score else (urls.depth, urls.id)

    rank = func.row_number().over(partition_by=UrlRow.host, order_by=in_order(UrlRow))
    ranked = (
        select(UrlRow.id, UrlRow.url, UrlRow.host, UrlRow.depth, UrlRow.score, rank.label("rank"))
        .where(UrlRow.state == URL_QUEUED, _held_by(owner))
        .subquery()
    )
    columns = (ranked.c.id, ranked.c.url, ranked.c.host, ranked.c.depth, ranked.c.score)
    result = await connection.stream(
        select(*columns).order_by(ranked.c.rank > share, *in_order(ranked.c))
    )
    try:
        async for rows in result.partitions(batch_size):
            yield [QueuedUrl(*row) for row in rows]
    finally:
        await result.close()


async def queued_of_hosts(
    connection: AsyncConnection, hosts: Sequence[str], *, by_score: bool, per_host: int
) -> list[QueuedUrl]:
    """The best `per_host` queued URLs of each of `hosts`, in the frontier's order
    (highest score first with `by_score`, else shallowest first; ties to the shallower,
    then by id)."""

    def in_order(urls: Any) -> tuple[Any, ...]:
        return (urls.score.desc(), urls.depth, urls.id) if by_score else (urls.depth, urls.id)

    rank = func.row_number().over(partition_by=UrlRow.host, order_by=in_order(UrlRow))
    ranked = (
        select(UrlRow.id, UrlRow.url, UrlRow.host, UrlRow.depth, UrlRow.score, rank.label("rank"))
        .where(UrlRow.state == URL_QUEUED, UrlRow.host.in_(hosts))
        .subquery()
    )
    columns = (ranked.c.id, ranked.c.url, ranked.c.host, ranked.c.depth, ranked.c.score)
    result = await connection.execute(
        select(*columns).where(ranked.c.rank <= per_host).order_by(*in_order(ranked.c))
    )
    return [QueuedUrl(*row) for row in result.all()]


async def queued_with_parents(
    connection: AsyncConnection,
    *,
    limit: int,
    after_id: int = 0,
    owner: str | None = None,
    hosts: Sequence[str] | None = None,
) -> list[QueuedUrl]:
    """Queued URLs by id, each with what the fetch that found it showed: its parent's
    relevance (0 for a page without one, None for a seed) and how many new URLs that
    fetch revealed. `after_id` is the id of the last one already read; with `owner`,
    only the URLs of the hosts it holds; with `hosts`, only theirs."""
    statement = (
        select(
            UrlRow.id, UrlRow.url, UrlRow.host, UrlRow.depth, UrlRow.score, UrlRow.discovered_from
        )
        .where((UrlRow.state == URL_QUEUED) & (UrlRow.id > after_id), _held_by(owner))
        .order_by(UrlRow.id)
        .limit(limit)
    )
    if hosts is not None:
        statement = statement.where(UrlRow.host.in_(hosts))
    rows = (await connection.execute(statement)).all()
    parents = {row.discovered_from for row in rows if row.discovered_from is not None}
    found: dict[str, tuple[float, int]] = {}
    if parents:
        children = aliased(UrlRow)
        revealed = (
            select(func.count()).where(children.discovered_from == UrlRow.url).scalar_subquery()
        )
        result = await connection.execute(
            select(UrlRow.url, UrlRow.relevance, revealed).where(UrlRow.url.in_(parents))
        )
        found = {url: (relevance or 0.0, count) for url, relevance, count in result.all()}
    return [
        QueuedUrl(*row[:5], *found.get(row.discovered_from or "", (None, 0)))  # type: ignore[arg-type]
        for row in rows
    ]


async def count_queued_hosts(connection: AsyncConnection, owner: str | None = None) -> int:
    """Hosts with URLs in the frontier (with `owner`, of those it holds: a look at each
    of its leases, not a read of their queued URLs)."""
    if owner is None:
        statement = select(func.count(func.distinct(UrlRow.host))).where(UrlRow.state == URL_QUEUED)
    else:
        statement = (
            select(func.count())
            .select_from(HostLease)
            .where(
                HostLease.owner == owner,
                exists().where(UrlRow.state == URL_QUEUED, UrlRow.host == HostLease.host),
            )
        )
    return int(await connection.scalar(statement) or 0)


async def count_queued_by_host(
    connection: AsyncConnection, owner: str | None = None
) -> dict[str, int]:
    """URLs in the frontier, by host (with `owner`, of the hosts it holds)."""
    statement = (
        select(UrlRow.host, func.count())
        .where(UrlRow.state == URL_QUEUED, _held_by(owner))
        .group_by(UrlRow.host)
    )
    return {host: count for host, count in (await connection.execute(statement)).all()}
