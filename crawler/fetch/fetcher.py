"""One HTTP request at a time, through one aiohttp session: timeouts, a body size limit,
no automatic redirects (the visitor checks every hop), and every library error
translated here, once, into an `Outcome`.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime

import aiohttp
from aiohttp.abc import AbstractResolver
from yarl import URL

from crawler.errors import FetchError
from crawler.fetch.exchange import Exchange, is_decoded
from crawler.fetch.netguard import GuardedResolver, NetworkGuard, PrivateNetworkError
from crawler.fetch.resolver import CachingResolver
from crawler.fetch.robots import MAX_ROBOTS_BYTES
from crawler.fetch.sitemap_xml import MAX_FILE_BYTES
from crawler.outcomes import Outcome

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
ACCEPT = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5"
# what zlib decodes, within the body limit, wherever the crawler runs: aiohttp would
# also offer br or zstd wherever a module of that name is installed, and brotlipy (pywb
# brings it) takes br's import name but fails every answer aiohttp decodes with it
ACCEPT_ENCODING = "gzip, deflate"
READ_CHUNK = 64 * 1024
# the host was never asked: its address refused, or its name not found
NO_REQUEST_MADE = frozenset({Outcome.PRIVATE_NETWORK, Outcome.DNS_ERROR})

_CHARSET = re.compile(r"charset\s*=\s*[\"']?([\w.:-]+)", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Response:
    url: URL
    status: int
    content_type: str | None  # the media type alone, lower case
    charset: str | None
    location: str | None
    retry_after: float | None
    x_robots_tag: str | None
    body: bytes | None  # read only for HTML with a 2xx status
    truncated: bool  # reading stopped at the size limit
    size: int  # bytes read
    etag: str | None = None
    last_modified: str | None = None
    exchange: Exchange | None = None  # the whole exchange, when captures are kept
    link: str | None = None  # the Link headers' values, joined as one list

    @property
    def is_html(self) -> bool:
        return self.content_type is None or self.content_type in HTML_TYPES

    def text(self) -> str | None:
        """The body as text: its declared charset if Python knows it, else UTF-8."""
        if self.body is None:
            return None
        try:
            return self.body.decode(self.charset or "utf-8", errors="replace")
        except LookupError:  # a charset no codec is known for
            return self.body.decode("utf-8", errors="replace")


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _charset_of(content_type_header: str | None) -> str | None:
    if not content_type_header:
        return None
    match = _CHARSET.search(content_type_header)
    return match.group(1).lower() if match else None


class Fetcher:
    def __init__(
        self,
        *,
        user_agent: str,
        connect_timeout: float,
        total_timeout: float,
        max_body_bytes: int,
        guard: NetworkGuard,
        resolver: AbstractResolver | None = None,
        on_request: Callable[[], object] | None = None,
        capture: bool = False,
    ) -> None:
        self.user_agent = user_agent
        # keep every answer whole (status line, raw headers, any body up to the limit)
        self.capture = capture
        self.max_body_bytes = max_body_bytes
        self.guard = guard
        # names to addresses, each kept for its TTL; the guard leaves out refused ones.
        # A resolver given is its giver's to close.
        self._own_resolver = CachingResolver() if resolver is None else None
        self._resolver = GuardedResolver(guard, resolver or self._own_resolver)
        self._timeout = aiohttp.ClientTimeout(total=total_timeout, sock_connect=connect_timeout)
        # called as each request is sent (the crawl counts them): aiohttp's tracing
        # would do it at the cost of a trace's signals on every request
        self._on_request = on_request
        self._session: aiohttp.ClientSession | None = None

    async def open(self) -> None:
        connector = aiohttp.TCPConnector(
            limit=0,  # the engine bounds concurrency
            use_dns_cache=False,  # the resolver keeps each answer for its own TTL
            resolver=self._resolver,
            socket_factory=self.guard.socket,  # every connection, on its real address
        )
        self._session = aiohttp.ClientSession(
            connector=connector,
            timeout=self._timeout,
            headers={
                "User-Agent": self.user_agent,
                "Accept": ACCEPT,
                "Accept-Encoding": ACCEPT_ENCODING,
            },
            # bodies are decoded here, and a capture keeps the decoded body: aiohttp
            # de-chunks every body anyway, so the bytes on the wire are never at hand;
            # the WARC record says what it holds instead (crawler.store.warc_records)
            auto_decompress=True,
        )

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
        if self._own_resolver is not None:
            await self._own_resolver.close()

    async def get(self, url: URL, headers: Mapping[str, str] | None = None) -> Response:
        """One request, no redirects followed. Raises FetchError on no usable answer."""
        return await self._request(url, limit=self.max_body_bytes, html_only=True, headers=headers)

    async def get_robots(self, url: URL) -> Response:
        """One request for a robots.txt, no redirects followed: the visitor follows them,
        each hop in its host's turn. Raises FetchError on no usable answer."""
        return await self._request(url, limit=MAX_ROBOTS_BYTES, html_only=False, robots=True)

    async def get_sitemap(self, url: URL, read: Callable[[bytes], bool]) -> Response:
        """One request for a sitemap, no redirects followed: a 2xx body, decoded of its
        Content-Encoding, is handed to `read` piece by piece, as it arrives, until `read`
        says to stop or `MAX_FILE_BYTES` have come; it is not kept, and a capture keeps
        it up to `max_body_bytes` (marked truncated where it was cut).
        Raises FetchError on no usable answer."""
        return await self._request(url, limit=MAX_FILE_BYTES, html_only=False, read=read)

    async def _request(
        self,
        url: URL,
        *,
        limit: int,
        html_only: bool,
        headers: Mapping[str, str] | None = None,
        robots: bool = False,
        read: Callable[[bytes], bool] | None = None,
    ) -> Response:
        if self._session is None:
            raise RuntimeError("Fetcher.open() was not called")
        requested_at = time.time()
        if self._on_request is not None:
            self._on_request()
        try:
            async with self._session.get(url, allow_redirects=False, headers=headers) as response:
                header = response.headers.get("Content-Type")
                media_type = header.split(";", 1)[0].strip().lower() if header else None
                peer = _peer(response) if self.capture else None
                truncated = broke_off = False
                size = 0
                chunks: list[bytes] = []
                wanted = 200 <= response.status < 300 and (
                    not html_only or media_type is None or media_type in HTML_TYPES
                )
                if read is not None:
                    # read as it comes; a capture keeps it up to a page's limit
                    wanted, reading = False, 200 <= response.status < 300
                    if reading or self.capture:
                        async for chunk in response.content.iter_chunked(READ_CHUNK):
                            size += len(chunk)
                            if self.capture and size <= self.max_body_bytes:
                                chunks.append(chunk)
                            # `read` is handed the piece that passes the limit: it
                            # says itself where its limit cut the body
                            if reading and (not read(chunk) or size > limit):
                                truncated = True  # for the capture: the rest not asked
                                response.close()  # stop the transfer
                                break
                            if size > self.max_body_bytes and not reading:
                                truncated = True
                                response.close()
                                break
                        truncated = truncated or (self.capture and size > self.max_body_bytes)
                elif wanted or self.capture:
                    try:
                        async for chunk in response.content.iter_chunked(READ_CHUNK):
                            size += len(chunk)
                            if size > limit:
                                truncated = True
                                response.close()  # stop the transfer
                                break
                            chunks.append(chunk)
                    except (aiohttp.ClientError, TimeoutError, OSError, ValueError):
                        if wanted:
                            raise
                        broke_off = True  # a body read only to be kept: keep what came
                data = b"".join(chunks)
                body = data if wanted else None
                exchange = None
                if self.capture:
                    exchange = _exchange(
                        response, url, data, requested_at, peer, robots, truncated or broke_off
                    )
                return Response(
                    url=url,
                    status=response.status,
                    content_type=media_type,
                    charset=_charset_of(header),
                    location=response.headers.get("Location"),
                    retry_after=parse_retry_after(response.headers.get("Retry-After")),
                    x_robots_tag=response.headers.get("X-Robots-Tag"),
                    etag=response.headers.get("ETag"),
                    last_modified=response.headers.get("Last-Modified"),
                    link=", ".join(response.headers.getall("Link", ())) or None,
                    body=body,
                    truncated=truncated and wanted,
                    size=size,
                    exchange=exchange,
                )
        except PrivateNetworkError as error:
            raise FetchError(Outcome.PRIVATE_NETWORK, str(error)) from error
        except (TimeoutError, aiohttp.ServerTimeoutError) as error:
            raise FetchError(Outcome.TIMEOUT, "timed out") from error
        except aiohttp.ClientConnectorDNSError as error:
            if _caused_by(error, PrivateNetworkError):
                raise FetchError(Outcome.PRIVATE_NETWORK, str(error)) from error
            raise FetchError(Outcome.DNS_ERROR, str(error)) from error
        except aiohttp.ClientConnectorError as error:
            if _caused_by(error, PrivateNetworkError):
                raise FetchError(Outcome.PRIVATE_NETWORK, str(error)) from error
            raise FetchError(Outcome.CONNECTION_ERROR, str(error)) from error
        except (aiohttp.ClientError, OSError, ValueError, UnicodeError) as error:
            # resets, truncated or malformed answers, bad gzip, refused connections
            raise FetchError(
                Outcome.CONNECTION_ERROR, f"{type(error).__name__}: {error}"
            ) from error


def _peer(response: aiohttp.ClientResponse) -> str | None:
    connection = response.connection  # None once a body-less answer released it
    if connection is None or connection.transport is None:
        return None
    address = connection.transport.get_extra_info("peername")
    return str(address[0]) if address else None


def _exchange(
    response: aiohttp.ClientResponse,
    url: URL,
    body: bytes,
    requested_at: float,
    peer: str | None,
    robots: bool,
    truncated: bool,
) -> Exchange:
    request = response.request_info
    version = response.version or aiohttp.HttpVersion11
    return Exchange(
        url=str(url),
        robots=robots,
        requested_at=requested_at,
        request_target=request.url.raw_path_qs,
        request_headers=tuple(request.headers.items()),
        http_version=f"{version.major}.{version.minor}",
        status=response.status,
        reason=response.reason or "",
        headers=tuple(
            (name.decode("latin-1"), value.decode("latin-1"))
            for name, value in response.raw_headers
        ),
        body=body,
        truncated=truncated,
        decoded=is_decoded(response.headers.get("Content-Encoding")),
        peer=peer,
    )


def _caused_by(error: BaseException, kind: type[BaseException]) -> bool:
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, kind) or isinstance(getattr(seen, "os_error", None), kind):
            return True
        seen = seen.__cause__ or seen.__context__
    return False
