"""One HTTP request and its answer as they went over the wire, for the WARC files.

The fetcher fills one in when the crawl keeps its captures; nothing else reads it.
"""

from __future__ import annotations

from dataclasses import dataclass

# the content codings aiohttp undoes itself (its HttpResponseParser), so a body read
# through it is decoded exactly when Content-Encoding names one of these
DECODED_CODINGS = frozenset({"gzip", "deflate", "br", "zstd"})


@dataclass(frozen=True, slots=True)
class Exchange:
    url: str
    robots: bool  # a robots.txt request, not a page's
    requested_at: float  # unix seconds, when the request was sent
    request_target: str  # the request line's target: path and query
    request_headers: tuple[tuple[str, str], ...]  # as sent
    http_version: str  # "1.1"
    status: int
    reason: str
    headers: tuple[tuple[str, str], ...]  # as received, in order, repeats kept
    body: bytes  # as read: de-chunked, and decoded when `decoded`
    truncated: bool  # reading stopped: at the size limit, or the answer broke off
    decoded: bool  # the client undid the body's Content-Encoding
    peer: str | None = None  # the server's address


def is_decoded(content_encoding: str | None) -> bool:
    """Whether aiohttp decodes a body sent with this Content-Encoding (as it decides)."""
    if not content_encoding or not content_encoding.isascii():
        return False
    return content_encoding.lower() in DECODED_CODINGS
