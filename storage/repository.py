"""Repository functions: each takes an async connection and returns plain records."""

from __future__ import annotations

import dataclasses
import json
import zlib
from collections.abc import AsyncGenerator, AsyncIterator, Collection, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import exists, func, select, true
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.orm import aliased

from storage import state_writes, writes
from storage.dialects import conflict_insert
from storage.models import (
    URL_DONE,
    URL_QUEUED,
    CrawlMeta,
    HostLease,
    HostRow,
    LearnedState,
    PageText,
    SourceRow,
    TimelineRow,
    UrlRow,
    WarcFileRow,
)
from storage.records import (
    CrawlStatus,
    ExportRecord,
    FetchRecord,
    HostRecord,
    NewUrl,
    QueuedUrl,
    ScoreRaise,
    SourceRecord,
    TimelineSample,
)
from storage.state_writes import SOURCE_FIELDS

# The writes, on an async connection: the functions of `storage.writes` and
# `storage.state_writes` run through `run_sync`, so that the storage writer's thread
# runs the very same ones directly.


async def add_urls(connection: AsyncConnection, urls: Sequence[NewUrl]) -> list[QueuedUrl]:
    """Insert the URLs not yet known; return only those that were new, in the order given."""
    return await connection.run_sync(writes.add_urls, urls)


async def mark_reached(connection: AsyncConnection, urls: Sequence[NewUrl]) -> dict[str, int]:
    """Record URLs fetched as redirect targets (`writes.mark_reached`)."""
    return await connection.run_sync(writes.mark_reached, urls)


async def raise_scores(
    connection: AsyncConnection, raises: Sequence[ScoreRaise]
) -> list[list[int]]:
    """Raise queued URLs' scores (`writes.raise_scores`)."""
    return await connection.run_sync(writes.raise_scores, raises)


async def record_fetches(connection: AsyncConnection, records: Sequence[FetchRecord]) -> None:
    await connection.run_sync(writes.record_fetches, records)


async def save_warc_files(connection: AsyncConnection, committed: Mapping[str, int]) -> None:
    """Record how many bytes of each WARC file hold records committed with their rows."""
    await connection.run_sync(writes.save_warc_files, committed)


async def save_hosts(connection: AsyncConnection, hosts: Sequence[HostRecord]) -> None:
    await connection.run_sync(state_writes.save_hosts, hosts)


async def save_sources(connection: AsyncConnection, sources: Sequence[SourceRecord]) -> None:
    await connection.run_sync(state_writes.save_sources, sources)


async def save_learned_state(connection: AsyncConnection, name: str, state: bytes) -> None:
    await connection.run_sync(state_writes.save_learned_state, name, state)


async def add_timeline(connection: AsyncConnection, samples: Sequence[TimelineSample]) -> None:
    await connection.run_sync(state_writes.add_timeline, samples)


def _held_by(owner: str | None) -> Any:
    """Only the URLs of the hosts `owner` holds a lease of (None: every URL)."""
    if owner is None:
        return true()
    return UrlRow.host.in_(select(HostLease.host).where(HostLease.owner == owner))


async def is_known_done(connection: AsyncConnection, url: str) -> bool:
    """Whether `url` was fetched (or refused for good) directly or as a redirect target."""
    state = await connection.scalar(select(UrlRow.state).where(UrlRow.url == url))
    return state is not None and state != URL_QUEUED


async def warc_locations(
    connection: AsyncConnection, url_ids: Sequence[int]
) -> dict[int, tuple[str, int]]:
    """Where the last captures of these URLs are: (WARC file, offset), for those with one."""
    if not url_ids:
        return {}
    result = await connection.execute(
        select(UrlRow.id, UrlRow.warc_file, UrlRow.warc_offset).where(
            UrlRow.id.in_(url_ids), UrlRow.warc_file.is_not(None)
        )
    )
    return {
        url_id: (name, offset)
        for url_id, name, offset in result.all()
        if name is not None and offset is not None
    }


async def load_warc_files(connection: AsyncConnection) -> dict[str, int]:
    """Committed bytes by WARC file name."""
    result = await connection.execute(select(WarcFileRow.name, WarcFileRow.committed_bytes))
    return {name: size for name, size in result.all()}


async def page_text(connection: AsyncConnection, url: str) -> str | None:
    result = await connection.execute(
        select(PageText.text).join(UrlRow, UrlRow.id == PageText.url_id).where(UrlRow.url == url)
    )
    blob = result.scalar_one_or_none()
    return None if blob is None else zlib.decompress(blob).decode()


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


async def pages_by_host(
    connection: AsyncConnection, *, not_counted: Collection[int] = ()
) -> dict[str, int]:
    """URLs visited whose host answered, by host: statuses in `not_counted` (redirects
    not followed) left out."""
    statement = (
        select(UrlRow.host, func.count())
        .where(
            UrlRow.state == URL_DONE,
            UrlRow.status.is_not(None),
            UrlRow.status.not_in(not_counted) if not_counted else true(),
        )
        .group_by(UrlRow.host)
    )
    return {host: count for host, count in (await connection.execute(statement)).all()}


_HOST_COLUMNS = (
    HostRow.host,
    HostRow.robots_status,
    HostRow.robots_body,
    HostRow.robots_fetched_at,
    HostRow.backoff,
    HostRow.failures,
    HostRow.not_before,
    HostRow.sitemaps,
)


async def load_hosts(
    connection: AsyncConnection, *, closed_after: float | None = None
) -> list[HostRecord]:
    """Every host's record, or only those closed beyond `closed_after` (unix seconds)."""
    statement = select(*_HOST_COLUMNS)
    if closed_after is not None:
        statement = statement.where(HostRow.not_before > closed_after)
    result = await connection.execute(statement)
    return [HostRecord(*row) for row in result.all()]


async def iter_host_names(
    connection: AsyncConnection, *, batch_size: int = 10_000
) -> AsyncIterator[list[str]]:
    """The names of the hosts with a record, in batches."""
    last = ""
    while True:
        result = await connection.execute(
            select(HostRow.host).where(HostRow.host > last).order_by(HostRow.host).limit(batch_size)
        )
        batch = list(result.scalars())
        if not batch:
            return
        yield batch
        last = batch[-1]


async def load_host(connection: AsyncConnection, host: str) -> HostRecord | None:
    result = await connection.execute(select(*_HOST_COLUMNS).where(HostRow.host == host))
    row = result.first()
    return None if row is None else HostRecord(*row)


async def load_sources(connection: AsyncConnection) -> list[SourceRecord]:
    result = await connection.execute(
        select(*(getattr(SourceRow, name) for name in SOURCE_FIELDS)).order_by(SourceRow.url_id)
    )
    return [SourceRecord(*row) for row in result.all()]


async def load_learned_state(connection: AsyncConnection, name: str) -> bytes | None:
    result = await connection.execute(select(LearnedState.state).where(LearnedState.name == name))
    return result.scalar_one_or_none()


async def load_learned_states(connection: AsyncConnection, name: str) -> dict[str, bytes]:
    """Every saved state of the model `name`: the one saved under that name and those
    saved as `name@DAEMON`, by name."""
    result = await connection.execute(
        select(LearnedState.name, LearnedState.state).where(
            (LearnedState.name == name) | LearnedState.name.startswith(f"{name}@", autoescape=True)
        )
    )
    return {saved_name: state for saved_name, state in result.all()}


async def load_timeline(connection: AsyncConnection) -> list[TimelineSample]:
    """Every sample, oldest first."""
    result = await connection.execute(
        select(TimelineRow.taken_at, TimelineRow.values).order_by(TimelineRow.taken_at)
    )
    return [TimelineSample(taken_at, json.loads(values)) for taken_at, values in result.all()]


async def set_meta(connection: AsyncConnection, values: Mapping[str, str]) -> None:
    statement = conflict_insert(connection, CrawlMeta)
    statement = statement.on_conflict_do_update(
        index_elements=["key"], set_={"value": statement.excluded.value}
    )
    await connection.execute(statement, [{"key": k, "value": v} for k, v in values.items()])


async def get_meta(connection: AsyncConnection) -> dict[str, str]:
    result = await connection.execute(select(CrawlMeta.key, CrawlMeta.value))
    return {key: value for key, value in result.all()}


_ORIGINAL = aliased(UrlRow)  # the page a near-duplicate repeats


async def iter_export(
    connection: AsyncConnection, *, min_relevance: float | None = None, text: bool = False
) -> AsyncIterator[ExportRecord]:
    """Every fetched (or refused) URL, in the order they were discovered; with `text`,
    each with its page's main text (None where none was stored)."""
    query = (
        select(
            UrlRow.url,
            UrlRow.final_url,
            UrlRow.canonical_url,
            UrlRow.host,
            UrlRow.status,
            UrlRow.content_type,
            UrlRow.relevance,
            UrlRow.title,
            UrlRow.depth,
            UrlRow.discovered_from,
            UrlRow.fetched_at,
            UrlRow.fetch_count,
            UrlRow.error,
            UrlRow.warc_file,
            UrlRow.warc_offset,
            _ORIGINAL.url.label("near_duplicate_of"),
            UrlRow.language,
        )
        .outerjoin(_ORIGINAL, _ORIGINAL.id == UrlRow.near_duplicate_of)
        .where(UrlRow.state == URL_DONE)
        .order_by(UrlRow.id)
    )
    if min_relevance is not None:
        query = query.where(UrlRow.relevance >= min_relevance)
    if text:
        query = query.add_columns(PageText.text).outerjoin(PageText, PageText.url_id == UrlRow.id)
    result = await connection.stream(query.execution_options(yield_per=1000))
    async for row in result:
        values = dict(row._mapping)
        if text and values["text"] is not None:
            values["text"] = zlib.decompress(values["text"]).decode()
        record = ExportRecord(**values)
        if record.fetched_at is not None and record.fetched_at.tzinfo is None:
            # SQLite keeps no offset; everything is written in UTC
            record = dataclasses.replace(record, fetched_at=record.fetched_at.replace(tzinfo=UTC))
        yield record


async def crawl_status(connection: AsyncConnection, *, relevance_threshold: float) -> CrawlStatus:
    done = UrlRow.state == URL_DONE
    pages = await connection.scalar(
        select(func.count()).where(done, UrlRow.error.is_(None)).select_from(UrlRow)
    )
    relevant = await connection.scalar(
        select(func.count()).where(done, UrlRow.relevance >= relevance_threshold)
    )
    frontier = await connection.scalar(select(func.count()).where(UrlRow.state == URL_QUEUED))
    hosts = await connection.scalar(select(func.count(func.distinct(UrlRow.host))))
    errors = await connection.execute(
        select(UrlRow.error, func.count())
        .where(done, UrlRow.error.is_not(None))
        .group_by(UrlRow.error)
        .order_by(func.count().desc())
    )
    sources, revisits, revisit_items = (
        await connection.execute(
            select(
                func.count(),
                func.coalesce(func.sum(SourceRow.visits), 0),
                func.coalesce(func.sum(SourceRow.items), 0),
            ).select_from(SourceRow)
        )
    ).one()
    return CrawlStatus(
        pages=pages or 0,
        relevant_pages=relevant or 0,
        relevance_threshold=relevance_threshold,
        frontier=frontier or 0,
        hosts=hosts or 0,
        errors={str(kind): count for kind, count in errors.all()},
        sources=sources,
        revisits=revisits,
        revisit_items=revisit_items,
    )


def utc_now() -> datetime:
    return datetime.now(UTC)
