"""Reading a crawl's WARC files back with warcio and the web-archive tools' commands."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator


@dataclass
class Record:
    file: str
    offset: int
    type: str
    uri: str
    headers: dict[str, str]  # the WARC headers
    status: int | None
    http_headers: list[tuple[str, str]]
    payload: bytes


def tool(name: str) -> str:
    """A command installed beside this Python (warcio, cdxj-indexer, wb-manager, wayback)."""
    return str(Path(sys.executable).parent / name)


def warc_files(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.warc.gz"))


def read_records(directory: Path) -> list[Record]:
    records = []
    for path in warc_files(directory):
        with path.open("rb") as handle:
            iterator = ArchiveIterator(handle)
            for record in iterator:
                http = record.http_headers
                payload = record.content_stream().read()  # before the offset: that reads on
                records.append(
                    Record(
                        file=path.name,
                        offset=iterator.get_record_offset(),
                        type=record.rec_type,
                        uri=record.rec_headers.get_header("WARC-Target-URI") or "",
                        headers=dict(record.rec_headers.headers),
                        status=int(http.get_statuscode())
                        if http
                        and record.rec_type
                        in (
                            "response",
                            "revisit",
                        )
                        else None,
                        http_headers=list(http.headers) if http else [],
                        payload=payload,
                    )
                )
    return records


def captures(records: list[Record]) -> list[Record]:
    """The response and revisit records: one an answer."""
    return [r for r in records if r.type in ("response", "revisit")]


def twice(records: list[Record]) -> list[str]:
    """URLs with more than one response or revisit record."""
    counts = Counter(r.uri for r in captures(records))
    return sorted(url for url, n in counts.items() if n > 1)


def warcio_check(directory: Path) -> subprocess.CompletedProcess[str]:
    """`warcio check` over every file: digests verified, every record whole."""
    return subprocess.run(
        [tool("warcio"), "check", "-v", *map(str, warc_files(directory))],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
