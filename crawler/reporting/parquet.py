"""The collection as a Parquet file, through pyarrow (the optional extra `parquet`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from crawler.errors import MissingExtra

PARQUET_EXTRA = "topical-crawler[parquet]"
BATCH_ROWS = 2_000  # rows held before they are written as one record batch


def _arrow() -> Any:
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError as error:
        raise MissingExtra(
            f"--format parquet needs pyarrow: pip install '{PARQUET_EXTRA}'"
        ) from error
    return pyarrow


def check_available() -> None:
    """Raise, naming the extra to install, where pyarrow is missing."""
    _arrow()


def _schema(pa: Any, text: bool) -> Any:
    fields = [
        ("url", pa.string()),
        ("final_url", pa.string()),
        ("host", pa.string()),
        ("status", pa.int32()),
        ("content_type", pa.string()),
        ("relevance", pa.float64()),
        ("title", pa.string()),
        ("depth", pa.int32()),
        ("discovered_from", pa.string()),
        ("fetched_at", pa.timestamp("us", tz="UTC")),
        ("fetch_count", pa.int32()),
        ("error", pa.string()),
        ("warc_file", pa.string()),
        ("warc_offset", pa.int64()),
        ("near_duplicate_of", pa.string()),
        ("language", pa.string()),
        ("canonical_url", pa.string()),
    ]
    if text:
        fields.append(("text", pa.string()))
    return pa.schema(fields)


def write_parquet(path: Path, rows: Iterable[dict[str, Any]], *, text: bool) -> int:
    """Write the rows (export records' values, fetched_at a datetime) to `path`;
    return how many."""
    pa = _arrow()
    schema = _schema(pa, text)
    count = 0
    with pa.parquet.ParquetWriter(path, schema) as writer:
        for batch in _batches(rows):
            writer.write_table(pa.Table.from_pylist(batch, schema=schema))
            count += len(batch)
    return count


def _batches(rows: Iterable[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    batch: list[dict[str, Any]] = []
    for row in rows:
        batch.append(row)
        if len(batch) == BATCH_ROWS:
            yield batch
            batch = []
    if batch:
        yield batch
