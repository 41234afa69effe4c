"""The crawl's WARC files: one open at a time, rotated by size, cut back after a kill.

Files are named `<prefix>-<timestamp>-<serial>.warc.gz` and carry an `.open` suffix
while written (Heritrix's convention), under an exclusive lock. Each begins with a
`warcinfo` record naming the crawler and the crawl's settings; each record is a gzip
member of its own.

The storage writer calls `write` in a thread with a batch's captures, before the
transaction that records the batch: the records are written and fsynced first, then
the rows pointing at them and the file's committed length commit together. So a row
never points at a record that is not on disk, and after a kill the open file is cut
back to its committed length (`recover`): the records past it belong to rows that never
committed, whose URLs are fetched again. No URL is captured twice, and every file left
holds whole records only. A file is rotated only between batches, so a closed file
never holds an uncommitted record (a file may pass `max_size` by one batch).

A write that fails (a full disk) raises WarcError: the user's to fix, it stops the crawl
like a database refusing writes.
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import logging
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO

from warcio.archiveiterator import ArchiveIterator

from crawler.errors import WarcError
from crawler.fetch.exchange import Exchange
from crawler.store.warc_records import Capture, RecordWriter, payload_digest

log = logging.getLogger(__name__)

OPEN_SUFFIX = ".open"
EXTENSION = ".warc.gz"
DEFAULT_MAX_SIZE = 1_000_000_000  # bytes a file grows to before the next one starts
MAX_DIGESTS = 200_000  # payload digests remembered for identical-payload revisits
CRAWL_ID_FIELD = "crawl-id"


@dataclass(frozen=True, slots=True)
class CaptureGroup:
    """One write's exchanges, in the order they happened. `earlier` is where the URL's
    last capture is (file name, offset), for a 304 answer to refer to."""

    exchanges: Sequence[Exchange]
    earlier: tuple[str, int] | None = None


@dataclass(frozen=True, slots=True)
class Written:
    """Where each group's page record went (None: no page answer in it), and the
    length of the file written to, up to the end of the batch."""

    locations: list[tuple[str, int] | None]
    committed: dict[str, int] = field(default_factory=dict)


class WarcArchive:
    def __init__(
        self,
        directory: Path,
        *,
        prefix: str,
        max_size: int = DEFAULT_MAX_SIZE,
        info: Mapping[str, str],
        crawl_id: str,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.directory = directory
        self.prefix = prefix
        self.max_size = max_size
        self.info = {**info, CRAWL_ID_FIELD: crawl_id}
        self.crawl_id = crawl_id
        self.clock = clock
        self._serial = 0
        self._file: BinaryIO | None = None
        self._name = ""  # the open file's name, without the suffix
        self._records: RecordWriter | None = None
        self._digests: dict[str, Capture] = {}  # payload digest -> its first capture

    @property
    def path(self) -> Path | None:
        """The file being written, if one is open."""
        return None if self._file is None else self.directory / (self._name + OPEN_SUFFIX)

    # -- writing (in a worker thread, one batch at a time) ----------------------------

    def write(self, groups: Sequence[CaptureGroup]) -> Written:
        """Append the groups' records and make them durable; rotate first if due."""
        try:
            if self._file is not None and self._file.tell() >= self.max_size:
                self._close_file()
            if self._file is None:
                self._open_file()
            assert self._file is not None
            locations = [self._write_group(group) for group in groups]
            self._file.flush()
            os.fsync(self._file.fileno())
            return Written(locations, {self._name: self._file.tell()})
        except OSError as error:
            raise WarcError(f"cannot write the WARC file {self.path}: {error}") from error

    def close(self) -> None:
        """Close the open file, if any: it loses its `.open` suffix."""
        try:
            if self._file is not None:
                self._close_file()
        except OSError as error:
            raise WarcError(f"cannot close the WARC file {self.path}: {error}") from error

    def release(self) -> None:
        """Let go of the open file without closing it (the crawl failed): it keeps its
        `.open` suffix, and the next run cuts it back to what committed."""
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._file.close()
            self._file = self._records = None

    def _open_file(self) -> None:
        stamp = datetime.fromtimestamp(self.clock(), UTC).strftime("%Y%m%d%H%M%S%f")[:17]
        while True:  # a name no file has, open or closed
            name = f"{self.prefix}-{stamp}-{self._serial:05d}{EXTENSION}"
            self._serial += 1
            path = self.directory / (name + OPEN_SUFFIX)
            if (self.directory / name).exists():
                continue
            try:
                handle = path.open("xb")
            except FileExistsError:
                continue
            break
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        self._file, self._name = handle, name
        self._records = RecordWriter(handle)
        self._records.warcinfo(name, self.info)
        log.info("writing WARC file %s", path)

    def _close_file(self) -> None:
        assert self._file is not None
        path = self.directory / (self._name + OPEN_SUFFIX)
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()  # and the lock with it
        path.rename(self.directory / self._name)
        _sync_directory(self.directory)
        self._file = self._records = None

    def _write_group(self, group: CaptureGroup) -> tuple[str, int] | None:
        location = None
        for exchange in group.exchanges:
            offset = self._write_exchange(exchange, group.earlier)
            if not exchange.robots:
                location = (self._name, offset)
        return location

    def _write_exchange(self, exchange: Exchange, earlier: tuple[str, int] | None) -> int:
        """A response (or revisit) record and the request record concurrent to it."""
        assert self._file is not None
        assert self._records is not None
        offset = self._file.tell()
        if exchange.status == 304 and earlier is not None:
            capture = self._records.revisit(exchange, self._read_capture(*earlier))
        else:
            digest = payload_digest(exchange.body)
            whole = 200 <= exchange.status < 300 and exchange.body and not exchange.truncated
            same = self._digests.get(digest) if whole else None
            if same is not None:
                capture = self._records.revisit(exchange, same, digest=digest)
            else:
                capture = self._records.response(exchange, digest)
                if whole:
                    self._remember(digest, capture)
        self._records.request(exchange, capture)
        return offset

    def _remember(self, digest: str, capture: Capture) -> None:
        if len(self._digests) >= MAX_DIGESTS:
            del self._digests[next(iter(self._digests))]  # the oldest
        self._digests[digest] = capture

    def _read_capture(self, name: str, offset: int) -> Capture | None:
        """The record at `offset` of a file of this crawl, if it is still there."""
        if self._file is not None and name == self._name:
            self._file.flush()
            path = self.directory / (name + OPEN_SUFFIX)
        else:
            path = self.directory / name
        try:
            with path.open("rb") as handle:
                handle.seek(offset)
                record = next(iter(ArchiveIterator(handle)))
                headers = record.rec_headers
                return Capture(
                    headers.get_header("WARC-Record-ID"),
                    headers.get_header("WARC-Target-URI"),
                    headers.get_header("WARC-Date"),
                )
        except (OSError, StopIteration, ValueError) as error:
            log.debug("no earlier capture at %s:%d: %s", path, offset, error)
            return None

    # -- recovery (at start, before the crawl writes) ---------------------------------

    def recover(self, committed: Mapping[str, int]) -> list[str]:
        """Close the open files a killed run of this crawl left: cut each back to the
        length its committed rows account for. A file no row committed to is removed;
        another crawl's, or one a live process holds, is left alone. Returns the names
        of the files closed."""
        closed = []
        pattern = f"{glob.escape(self.prefix)}-*{EXTENSION}{OPEN_SUFFIX}"
        for path in sorted(self.directory.glob(pattern)):
            name = path.name.removesuffix(OPEN_SUFFIX)
            try:
                if self._recover_file(path, committed.get(name)):
                    closed.append(name)
            except OSError as error:
                raise WarcError(f"cannot recover the WARC file {path}: {error}") from error
        return closed

    def _recover_file(self, path: Path, length: int | None) -> bool:
        with path.open("r+b") as handle:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                log.info("WARC file %s is being written by another process", path)
                return False
            if length is None:
                # killed between creating it and writing its warcinfo (one write)
                empty = os.fstat(handle.fileno()).st_size == 0
                if not empty and _crawl_id(handle) != self.crawl_id:
                    log.warning("WARC file %s is another crawl's: left as it is", path)
                    return False
                path.unlink()  # only records whose rows never committed
                log.warning("removed WARC file %s: a killed run committed none of it", path)
                return False
            size = os.fstat(handle.fileno()).st_size
            if size < length:  # bytes lost after they were committed: keep whole records
                log.warning("WARC file %s is shorter than committed (%d < %d)", path, size, length)
                length = _whole_records(handle)
            handle.truncate(length)
            handle.flush()
            os.fsync(handle.fileno())
            path.rename(path.with_name(path.name.removesuffix(OPEN_SUFFIX)))
        _sync_directory(path.parent)
        if size > length:
            log.info("WARC file %s cut back from %d to %d bytes", path, size, length)
        return True


def _crawl_id(handle: BinaryIO) -> str | None:
    """The crawl id a file's warcinfo record names."""
    handle.seek(0)
    try:
        record = next(iter(ArchiveIterator(handle)))
        if record.rec_type != "warcinfo":
            return None
        for line in record.content_stream().read().decode("utf-8", "replace").splitlines():
            name, _, value = line.partition(":")
            if name.strip() == CRAWL_ID_FIELD:
                return value.strip()
    except Exception:  # a file cut inside its first record: not readable as WARC
        return None
    return None


def _whole_records(handle: BinaryIO) -> int:
    """The end of the last whole record of a WARC file."""
    handle.seek(0)
    end = 0
    records = ArchiveIterator(handle)
    try:
        for _record in records:
            records.read_to_end()
            end = records.get_record_offset() + records.get_record_length()
    except Exception:  # a record cut short: the ones before it are whole
        pass
    return end


def _sync_directory(directory: Path) -> None:
    """Make a rename durable."""
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
