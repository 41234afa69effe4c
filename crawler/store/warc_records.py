"""WARC records (ISO 28500, WARC/1.1) of one HTTP exchange, built with warcio.

A response record holds the status line, the headers and the body as the crawler read
them. aiohttp de-chunks every body and undoes gzip, deflate, br and zstd, so the record
holds the decoded entity and says so in its headers: Transfer-Encoding and the decoded
Content-Encoding are dropped and Content-Length is the length held, as browser-based
archivers (Browsertrix) write it. Replay tools serve such a record as it is; the digest
of its payload is the digest of what a reader gets. A body cut at the size limit is
marked `WARC-Truncated: length`.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime
from io import BytesIO
from typing import Any

from warcio.statusandheaders import StatusAndHeaders, StatusAndHeadersParser
from warcio.timeutils import datetime_to_iso_date
from warcio.warcwriter import WARCWriter

from crawler.fetch.exchange import Exchange

WARC_VERSION = "WARC/1.1"
NOT_MODIFIED = "http://netpreserve.org/warc/1.1/revisit/server-not-modified"
_DROPPED_ALWAYS = frozenset({"transfer-encoding"})


@dataclass(frozen=True, slots=True)
class Capture:
    """A record another can refer to: a revisit names it."""

    record_id: str
    uri: str
    date: str  # its WARC-Date


def new_record_id() -> str:
    return str(StatusAndHeadersParser.make_warc_id())


def warc_date(timestamp: float) -> str:
    moment = datetime.fromtimestamp(timestamp, UTC).replace(tzinfo=None)
    return str(datetime_to_iso_date(moment, use_micros=True))


def payload_digest(body: bytes) -> str:
    return "sha1:" + base64.b32encode(hashlib.sha1(body).digest()).decode("ascii")


def response_headers(exchange: Exchange) -> StatusAndHeaders:
    """The status line and headers as received, but for what the body no longer has."""
    dropped = set(_DROPPED_ALWAYS)
    if exchange.decoded:
        dropped.add("content-encoding")
    names = {name.lower() for name, _ in exchange.headers}
    changed = bool(dropped & names) or exchange.truncated
    if changed:
        dropped.add("content-length")
    headers = [(name, value) for name, value in exchange.headers if name.lower() not in dropped]
    if changed:
        headers.append(("Content-Length", str(len(exchange.body))))
    return StatusAndHeaders(
        f"{exchange.status} {exchange.reason}",
        headers,
        protocol=f"HTTP/{exchange.http_version}",
    )


def request_headers(exchange: Exchange) -> StatusAndHeaders:
    line = f"GET {exchange.request_target} HTTP/{exchange.http_version}"
    return StatusAndHeaders(line, list(exchange.request_headers), is_http_request=True)


class RecordWriter:
    """Writes records to a binary file, one gzip member each."""

    def __init__(self, out: Any) -> None:
        self._warc = WARCWriter(out, gzip=True, warc_version=WARC_VERSION)

    def warcinfo(self, filename: str, info: dict[str, str]) -> None:
        self._warc.write_record(self._warc.create_warcinfo_record(filename, info))

    def response(self, exchange: Exchange, digest: str) -> Capture:
        record_id, date = new_record_id(), warc_date(exchange.requested_at)
        fields = self._fields(exchange, record_id, date)
        fields["WARC-Payload-Digest"] = digest
        if exchange.truncated:
            fields["WARC-Truncated"] = "length"
        record = self._warc.create_warc_record(
            exchange.url,
            "response",
            payload=BytesIO(exchange.body),
            length=len(exchange.body),
            http_headers=response_headers(exchange),
            warc_headers_dict=fields,
        )
        self._warc.write_record(record)
        return Capture(record_id, exchange.url, date)

    def revisit(
        self, exchange: Exchange, earlier: Capture | None, *, digest: str | None = None
    ) -> Capture:
        """A revisit: the payload is the same as `earlier`'s (`digest` given), or the
        server answered 304 Not Modified (no digest; `earlier` when it is known)."""
        record_id, date = new_record_id(), warc_date(exchange.requested_at)
        fields = self._fields(exchange, record_id, date)
        if digest is not None:
            fields["WARC-Payload-Digest"] = digest
            fields["WARC-Profile"] = self._warc.REVISIT_PROFILE_1_1
        else:
            fields["WARC-Profile"] = NOT_MODIFIED
        if earlier is not None:
            fields["WARC-Refers-To"] = earlier.record_id
            fields["WARC-Refers-To-Target-URI"] = earlier.uri
            fields["WARC-Refers-To-Date"] = earlier.date
        record = self._warc.create_warc_record(
            exchange.url,
            "revisit",
            http_headers=response_headers(exchange),
            warc_headers_dict=fields,
        )
        self._warc.write_record(record)
        return Capture(record_id, exchange.url, date)

    def request(self, exchange: Exchange, concurrent_to: Capture) -> None:
        fields = {
            "WARC-Record-ID": new_record_id(),
            "WARC-Date": concurrent_to.date,
            "WARC-Concurrent-To": concurrent_to.record_id,
        }
        record = self._warc.create_warc_record(
            exchange.url,
            "request",
            payload=BytesIO(b""),
            length=0,
            http_headers=request_headers(exchange),
            warc_headers_dict=fields,
        )
        self._warc.write_record(record)

    @staticmethod
    def _fields(exchange: Exchange, record_id: str, date: str) -> dict[str, str]:
        fields = {"WARC-Record-ID": record_id, "WARC-Date": date}
        if exchange.peer:
            fields["WARC-IP-Address"] = exchange.peer
        return fields
