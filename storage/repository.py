"""Repository functions: each takes an async connection and returns plain records. The
frontier's reads are `storage.queued_urls`, the export's `storage.export`."""

from __future__ import annotations

import json
import zlib
from collections.abc import AsyncIterator, Collection, Mapping, Sequence
from datetime import UTC, datetime

from sqlalchemy import func, select, true
from sqlalchemy.ext.asyncio import AsyncConnection

from storage import state_writes, writes
from storage.dialects import conflict_insert
from storage.models import (
    URL_DONE,
    URL_QUEUED,
    CrawlMeta,
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
