"""URL canonicalisation (through yarl) and crawl scope.

One page is one row: scheme and host lower-cased, default ports and fragments dropped,
dot segments resolved, percent-encoding normalised, an empty path made "/", and session
ids (`;jsessionid=...`, `?sid=...`, ...) removed, so one page is not a thousand URLs.

Scope also keeps the crawl out of the commonest traps: paths that repeat a segment
(`/a/b/a/b/a/b`, what relative links on a misconfigured server make) or that go deeper
than MAX_PATH_SEGMENTS, as Heritrix's path rules do. Endless link chains (calendars)
end at the crawl's maximum depth.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from yarl import URL

from crawler.errors import BadUrlError

MAX_URL_LENGTH = 2048
MAX_PATH_SEGMENTS = 20
MAX_SEGMENT_REPEATS = 2  # a path segment seen more often than this marks a trap
CRAWLABLE_SCHEMES = frozenset({"http", "https"})
SESSION_PARAMETERS = frozenset(
    {"jsessionid", "phpsessid", "aspsessionid", "sid", "sessionid", "session_id", "cfid", "cftoken"}
)


def canonicalize(raw: str, base: URL | None = None) -> URL:
    """The canonical absolute form of `raw` (resolved against `base` if relative)."""
    raw = raw.strip()
    if not raw:
        raise BadUrlError("empty URL")
    if len(raw) > MAX_URL_LENGTH:
        raise BadUrlError(f"URL longer than {MAX_URL_LENGTH} characters")
    try:
        url = URL(raw)
        if base is not None:
            url = base.join(url)  # an absolute URL stays as it is
    except (ValueError, TypeError, UnicodeError) as error:
        raise BadUrlError(f"unparseable URL: {error}") from error
    if url.scheme not in CRAWLABLE_SCHEMES:
        raise BadUrlError(f"not an http(s) URL: scheme {url.scheme or 'missing'!r}")
    if not url.raw_host:
        raise BadUrlError("URL has no host")
    authority = url.raw_authority
    if url.explicit_port is not None and url.is_default_port():
        authority = authority.rsplit(":", 1)[0]
    url = URL.build(
        scheme=url.scheme,
        authority=authority,
        path=_without_path_session(url.raw_path) or "/",
        query_string=_without_query_session(url.raw_query_string),
        encoded=True,
    )  # without the fragment
    if len(str(url)) > MAX_URL_LENGTH:
        raise BadUrlError(f"URL longer than {MAX_URL_LENGTH} characters")
    return url


def _without_path_session(path: str) -> str:
    """/shop;jsessionid=ABC/item -> /shop/item"""
    if ";" not in path:
        return path
    segments = []
    for segment in path.split("/"):
        name, _, parameter = segment.partition(";")
        key = parameter.split("=", 1)[0].lower()
        segments.append(name if parameter and key in SESSION_PARAMETERS else segment)
    return "/".join(segments)


def _without_query_session(query: str) -> str:
    if not query:
        return query
    kept = [
        pair for pair in query.split("&") if pair.split("=", 1)[0].lower() not in SESSION_PARAMETERS
    ]
    return "&".join(kept)


def looks_like_a_trap(url: URL) -> bool:
    """A path too deep, or one that repeats a segment (relative links gone wrong)."""
    segments = [s for s in url.raw_path.split("/") if s]
    if len(segments) > MAX_PATH_SEGMENTS:
        return True
    seen: dict[str, int] = {}
    for segment in segments:
        seen[segment] = seen.get(segment, 0) + 1
        if seen[segment] > MAX_SEGMENT_REPEATS:
            return True
    return False


def host_key(url: URL) -> str:
    """The politeness and robots.txt unit: host and explicit non-default port."""
    host = url.raw_host or ""
    if url.explicit_port is not None and not url.is_default_port():
        return f"{host}:{url.port}"
    return host


@dataclass(frozen=True, slots=True)
class Scope:
    """Which URLs the crawl may visit: hosts (and their subdomains), and a maximum depth.

    Hosts are compared without ports, so one server on several ports is one site.
    """

    domains: frozenset[str]
    max_depth: int | None = None

    @classmethod
    def of(cls, domains: Iterable[str], max_depth: int | None = None) -> Scope:
        return cls(frozenset(d.lower().strip(".") for d in domains), max_depth)

    def allows(self, url: URL, depth: int = 0) -> bool:
        if self.max_depth is not None and depth > self.max_depth:
            return False
        if looks_like_a_trap(url):
            return False
        if not self.domains:
            return True
        host = (url.raw_host or "").lower()
        return any(host == d or host.endswith("." + d) for d in self.domains)
