"""The crawl's scope: which URLs it may visit, by host, path and depth.

Scope also keeps the crawl out of the commonest traps: paths that repeat a segment
(`/a/b/a/b/a/b`, what relative links on a misconfigured server make) or that go deeper
than MAX_PATH_SEGMENTS, as Heritrix's path rules do. Endless link chains (calendars)
end at the crawl's maximum depth. The user's URL filters (`crawler.net.url_filters`) are
part of the scope: a URL enters the frontier only through `Scope.allows` or
`LinkScope.host`, which meet them. A `LinkScope` remembers the links out of scope.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from yarl import URL

from crawler.net.known_urls import KnownUrls
from crawler.net.url_filters import NO_FILTERS, UrlFilters
from crawler.net.urls import host_key

MAX_PATH_SEGMENTS = 20
MAX_SEGMENT_REPEATS = 2  # a path segment seen more often than this marks a trap
OUTSIDE_MEMORY = 2**13  # URLs out of scope a LinkScope keeps, per generation

# a canonical URL of a plain host and a port at most (not a default one, which
# canonicalize drops): its host key, and its path
_PLAIN_CANONICAL = re.compile(r"https?://([A-Za-z0-9.\-]+(?::[1-9][0-9]*)?)(/[^?#]*)")


def looks_like_a_trap(url: URL) -> bool:
    """A path too deep, or one that repeats a segment (relative links gone wrong)."""
    return _a_trap_path(url.raw_path)


def _a_trap_path(path: str) -> bool:
    segments = [s for s in path.split("/") if s]
    if len(segments) > MAX_PATH_SEGMENTS:
        return True
    seen: dict[str, int] = {}
    for segment in segments:
        seen[segment] = seen.get(segment, 0) + 1
        if seen[segment] > MAX_SEGMENT_REPEATS:
            return True
    return False


@dataclass(frozen=True, slots=True)
class Scope:
    """Which URLs the crawl may visit: hosts (and their subdomains), a maximum depth, and
    the URL filters.

    Hosts are compared without ports, so one server on several ports is one site.
    """

    domains: frozenset[str]
    max_depth: int | None = None
    urls: UrlFilters = NO_FILTERS

    @classmethod
    def of(
        cls, domains: Iterable[str], max_depth: int | None = None, urls: UrlFilters = NO_FILTERS
    ) -> Scope:
        return cls(frozenset(d.lower().strip(".") for d in domains), max_depth, urls)

    def allows(self, url: URL, depth: int = 0) -> bool:
        """Whether the canonical URL `url` may be queued at `depth`."""
        return (
            self.allows_depth(depth)
            and self.allows_place(url.raw_host or "", url.raw_path)
            and self.urls.admits(str(url))
        )

    def allows_place(self, host: str, path: str) -> bool:
        """Whether a URL's host (as written) and path are in scope, at any depth."""
        if _a_trap_path(path):
            return False
        if not self.domains:
            return True
        # the host, or a domain it is under: it and each of its dot-suffixes looked up
        host = host.lower()
        while host not in self.domains:
            if "." not in host:
                return False
            host = host.partition(".")[2]
        return True

    def allows_depth(self, depth: int) -> bool:
        return self.max_depth is None or depth <= self.max_depth


class LinkScope:
    """`Scope.allows` for the links of page after page, with each link's host key: a
    URL's host and path do not change with the depth it is met at, so a URL found
    outside them is remembered (two generations of `memory`, as `KnownUrls` keeps) and
    not read again. A site's pages repeat their links out of scope (another project's
    pages, the home of the software documented) on every page."""

    def __init__(self, scope: Scope, *, memory: int = OUTSIDE_MEMORY) -> None:
        self.scope = scope
        self._outside = KnownUrls(memory=memory)

    def host(self, url: str, depth: int) -> str | None:
        """The host key of `url`, a canonical URL, if the scope allows it at `depth`."""
        if not self.scope.allows_depth(depth) or url in self._outside:
            return None
        plain = _PLAIN_CANONICAL.match(url)
        if plain is not None:  # most links: read without yarl's parse
            key, path = plain.groups()
            host = key.partition(":")[0]
        else:
            parsed = URL(url, encoded=True)
            key, host, path = host_key(parsed), parsed.raw_host or "", parsed.raw_path
        if not self.scope.allows_place(host, path) or not self.scope.urls.admits(url):
            self._outside.add(url)
            return None
        return key
