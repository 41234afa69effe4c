"""URL canonicalisation (through yarl) and crawl scope.

One page is one row: scheme and host lower-cased, default ports and fragments dropped,
dot segments resolved, percent-encoding normalised, an empty path made "/".
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from yarl import URL

MAX_URL_LENGTH = 2048
CRAWLABLE_SCHEMES = frozenset({"http", "https"})


class BadUrlError(ValueError):
    """A URL that cannot be crawled; the message says why."""


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
        path=url.raw_path or "/",
        query_string=url.raw_query_string,
        encoded=True,
    )  # without the fragment
    if len(str(url)) > MAX_URL_LENGTH:
        raise BadUrlError(f"URL longer than {MAX_URL_LENGTH} characters")
    return url


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
        if not self.domains:
            return True
        host = (url.raw_host or "").lower()
        return any(host == d or host.endswith("." + d) for d in self.domains)
