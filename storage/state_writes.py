"""The writes of the crawl's state, as functions of a synchronous connection (as
`storage.writes`): hosts' politeness records, re-visit sources, learned models and the
timeline's samples, saved at checkpoints and with the sitemaps a host's turn read."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence

from sqlalchemy import Connection, insert, select

from storage.dialects import conflict_insert, lock_order
from storage.models import HostRow, LearnedState, SourceRow, TimelineRow
from storage.records import HostRecord, SourceRecord, TimelineSample

SOURCE_FIELDS = tuple(field.name for field in dataclasses.fields(SourceRecord))


def save_hosts(connection: Connection, hosts: Sequence[HostRecord]) -> None:
    if not hosts:
        return
    statement = conflict_insert(connection, HostRow)
    columns = (
        "robots_status",
        "robots_body",
        "robots_fetched_at",
        "backoff",
        "failures",
        "sitemaps",
    )
    statement = statement.on_conflict_do_update(
        index_elements=["host"],
        set_={name: getattr(statement.excluded, name) for name in (*columns, "not_before")},
    )
    rows = [
        {"host": h.host, "not_before": h.not_before, **{c: getattr(h, c) for c in columns}}
        for h in hosts
    ]
    lock_order(connection, rows, "host")
    connection.execute(statement, rows)


def save_sources(connection: Connection, sources: Sequence[SourceRecord]) -> None:
    if not sources:
        return
    statement = conflict_insert(connection, SourceRow)
    statement = statement.on_conflict_do_update(
        index_elements=["url_id"],
        set_={name: statement.excluded[name] for name in SOURCE_FIELDS[1:]},
    )
    rows = [dataclasses.asdict(source) for source in sources]
    lock_order(connection, rows, "url_id")
    connection.execute(statement, rows)


def save_learned_state(connection: Connection, name: str, state: bytes) -> None:
    statement = conflict_insert(connection, LearnedState)
    statement = statement.on_conflict_do_update(
        index_elements=["name"], set_={"state": statement.excluded.state}
    )
    connection.execute(statement, [{"name": name, "state": state}])


def add_timeline(connection: Connection, samples: Sequence[TimelineSample]) -> None:
    """Add the samples not stored yet (a transaction run again writes none twice)."""
    if not samples:
        return
    taken = connection.execute(
        select(TimelineRow.taken_at).where(TimelineRow.taken_at.in_([s.taken_at for s in samples]))
    )
    stored = set(taken.scalars())
    fresh = [s for s in samples if s.taken_at not in stored]
    if fresh:
        connection.execute(
            insert(TimelineRow),
            [{"taken_at": s.taken_at, "values": json.dumps(s.values)} for s in fresh],
        )
