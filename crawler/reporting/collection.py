"""Reading the collection while a crawl may be writing it: export and status."""

from __future__ import annotations

import csv
import dataclasses
import json
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import storage
from crawler.config import defaults
from crawler.counts import WIDTH, Counts
from crawler.telemetry.timeline import requests_per_page
from policies.revisit.source_rates import change_rates

EXPORT_FIELDS = (
    "url",
    "final_url",
    "host",
    "status",
    "content_type",
    "relevance",
    "title",
    "depth",
    "discovered_from",
    "fetched_at",
    "fetch_count",
    "error",
    "warc_file",
    "warc_offset",
    "near_duplicate_of",
    "language",
    "canonical_url",
)
EXPORT_FORMATS = ("jsonl", "csv", "parquet")
TEXT_FORMATS = ("jsonl", "csv")  # written to a stream of text; Parquet to a file
RELEVANCE_DIGITS = 4
# what makes a spreadsheet read a cell as a formula (OWASP, "CSV Injection")
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def check_database_exists(db: str) -> None:
    """Reading must not create an empty SQLite file where the user mistyped a path."""
    try:
        url = storage.database_url(db)
    except ValueError as error:
        raise storage.StorageError(f"bad database URL {db!r}: {error}") from error
    on_disk = url.get_backend_name() == "sqlite" and url.database not in (None, "", ":memory:")
    if on_disk and not Path(str(url.database)).is_file():
        raise storage.StorageError(f"no crawl database at {url.database!r}")


def export_row(record: storage.ExportRecord, *, text: bool = False) -> dict[str, Any]:
    row = _record_values(record, text=text)
    if record.fetched_at is not None:
        row["fetched_at"] = record.fetched_at.isoformat(timespec="microseconds")
    return row


def _record_values(record: storage.ExportRecord, *, text: bool) -> dict[str, Any]:
    row = {name: getattr(record, name) for name in EXPORT_FIELDS}
    if record.relevance is not None:
        row["relevance"] = round(record.relevance, RELEVANCE_DIGITS)
    if text:
        row["text"] = record.text
    return row


async def export(
    db: str,
    out: IO[str],
    *,
    fmt: str = "jsonl",
    min_relevance: float | None = None,
    text: bool = False,
) -> int:
    """Write one record per fetched URL, with its page's main text if `text`, as JSON
    lines or CSV; return how many."""
    if fmt not in TEXT_FORMATS:
        raise ValueError(f"unknown export format {fmt!r} for a stream (known: jsonl, csv)")
    count = 0
    with _writer(out, fmt, text) as write:
        async for record in export_records(db, min_relevance, text):
            write(export_row(record, text=text))
            count += 1
    return count


async def export_file(
    db: str,
    path: Path,
    *,
    fmt: str = "jsonl",
    min_relevance: float | None = None,
    text: bool = False,
) -> int:
    """As `export`, to a file, in any of EXPORT_FORMATS. It is written beside `path`
    and renamed, so a failed export leaves no half file."""
    if fmt not in EXPORT_FORMATS:
        raise ValueError(f"unknown export format {fmt!r} (known: {', '.join(EXPORT_FORMATS)})")
    partial = path.with_name(path.name + ".partial")
    try:
        if fmt == "parquet":
            count = await _export_parquet(db, partial, min_relevance, text)
        else:
            with partial.open("w", encoding="utf-8", newline="") as out:
                count = await export(db, out, fmt=fmt, min_relevance=min_relevance, text=text)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    partial.replace(path)
    return count


async def _export_parquet(db: str, path: Path, min_relevance: float | None, text: bool) -> int:
    from crawler.reporting.parquet import check_available, write_parquet

    check_available()  # before the database is read
    rows = [_record_values(r, text=text) async for r in export_records(db, min_relevance, text)]
    return write_parquet(path, rows, text=text)


async def export_records(
    db: str, min_relevance: float | None, text: bool
) -> AsyncIterator[storage.ExportRecord]:
    """A crawl's records, finished or running, in the order its URLs were found."""
    check_database_exists(db)
    engine = storage.open_engine(db)
    try:
        async with engine.connect() as connection:
            async for record in storage.iter_export(
                connection, min_relevance=min_relevance, text=text
            ):
                yield record
    finally:
        await engine.dispose()


def _inert(value: Any) -> Any:
    """A text cell a spreadsheet would run as a formula, quoted so that it reads it as
    text; anything else as it is."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


@contextmanager
def _writer(out: IO[str], fmt: str, text: bool) -> Iterator[Any]:
    if fmt == "csv":
        fields = (*EXPORT_FIELDS, "text") if text else EXPORT_FIELDS
        table = csv.DictWriter(out, fieldnames=fields, lineterminator="\n")
        table.writeheader()
        yield lambda row: table.writerow({name: _inert(value) for name, value in row.items()})
    else:
        yield lambda row: out.write(json.dumps(row, ensure_ascii=False) + "\n")


async def status(db: str, *, relevance_threshold: float | None = None) -> storage.CrawlStatus:
    check_database_exists(db)
    engine = storage.open_engine(db)
    try:
        async with engine.connect() as connection:
            if relevance_threshold is None:
                meta = await storage.get_meta(connection)
                relevance_threshold = float(
                    meta.get("relevance_threshold", defaults.RELEVANCE_THRESHOLD)
                )
            report = await storage.crawl_status(connection, relevance_threshold=relevance_threshold)
            timeline = await storage.load_timeline(connection)
            daemons = await storage.load_daemons(connection)
        return dataclasses.replace(
            report, requests_per_page=requests_per_page(timeline), daemons=daemons
        )
    finally:
        await engine.dispose()


@dataclass(frozen=True, slots=True)
class SourceSummary:
    """What a source's re-visits have shown, as measured (no prior)."""

    url: str
    visits: int  # re-visits
    arrival_rate: float | None  # new URLs a second
    change_rate: float | None  # changes a second (Cho & Garcia-Molina)
    worth: float | None  # mean relevance of its items


async def top_sources(db: str, *, limit: int = 10) -> list[SourceSummary]:
    """The sources that publish the most, by their measured arrival rate."""
    check_database_exists(db)
    engine = storage.open_engine(db)
    try:
        async with engine.connect() as connection:
            records = await storage.load_sources(connection)
    finally:
        await engine.dispose()
    summaries = [
        SourceSummary(
            url=record.url,
            visits=record.visits,
            arrival_rate=record.items / record.exposure if record.exposure > 0 else None,
            change_rate=(
                float(change_rates(record.changes, record.visits, record.exposure))
                if record.visits
                else None
            ),
            worth=record.worth_total / record.worth_items if record.worth_items else None,
        )
        for record in records
    ]
    summaries.sort(key=lambda s: (s.arrival_rate is None, -(s.arrival_rate or 0.0), s.url))
    return summaries[:limit]


def format_sources(sources: list[SourceSummary]) -> str:
    def number(value: float | None, digits: int) -> str:
        return "-" if value is None else f"{value:.{digits}f}"

    lines = [f"{'new/s':>8} {'changes/s':>9} {'worth':>6} {'visits':>6}  source"]
    lines.extend(
        f"{number(s.arrival_rate, 3):>8} {number(s.change_rate, 3):>9} "
        f"{number(s.worth, 3):>6} {s.visits:>6}  {s.url}"
        for s in sources
    )
    return "\n".join(lines)


def status_counts(report: storage.CrawlStatus) -> Counts:
    """The crawl's counts (`crawler.counts`) from what the collection holds."""
    return Counts.of({"ok": report.pages, **report.errors}, relevant=report.relevant_pages)


def format_status(report: storage.CrawlStatus) -> str:
    counts = status_counts(report)
    lines = counts.total_lines(relevant_at=report.relevance_threshold)
    lines += [f"{'frontier':<{WIDTH}}{report.frontier}", f"{'hosts':<{WIDTH}}{report.hosts}"]
    if report.sources:  # pages re-visited for what they publish: none without re-visits
        lines.append(
            f"{'sources':<{WIDTH}}{report.sources} (re-visited {report.revisits} times, "
            f"{report.revisit_items} new URLs found)"
        )
    if report.requests_per_page is not None:
        lines.append(
            f"{'requests/page':<{WIDTH}}{report.requests_per_page:.3f} (robots.txt, redirects and "
            "retries beyond one a page)"
        )
    if report.daemons:
        lines.append("daemons (a crawl shared through the database)")
        lines.append(
            f"  {'daemon':<24} {'state':<8} {'pages':>7} {'pages/s':>8} {'hosts':>6}  heartbeat"
        )
        now = time.time()
        for daemon in report.daemons:
            silent = now - daemon.heartbeat_at > defaults.LEASE_SECONDS
            state = (
                "stopped" if daemon.stopped_at is not None else "silent" if silent else "running"
            )
            lines.append(
                f"  {daemon.id:<24} {state:<8} {daemon.pages:>7} "
                f"{daemon.pages_per_second:>8.1f} {daemon.hosts_held:>6}  "
                f"{max(now - daemon.heartbeat_at, 0.0):.0f} s ago"
            )
    lines.extend(counts.error_lines())
    return "\n".join(lines)
