"""What can become of a fetch: a closed set, used for metrics labels and the export.

`error` in the collection is the outcome's value for every outcome but OK and NOT_HTML.
"""

from __future__ import annotations

from enum import StrEnum


class Outcome(StrEnum):
    OK = "ok"  # an HTML page, parsed and scored
    NOT_MODIFIED = "not_modified"  # a re-visit answered 304: nothing new
    NOT_HTML = "not_html"  # fetched and recorded, not parsed
    HTTP_ERROR = "http_error"  # a 4xx or 5xx answer (status says which)
    TIMEOUT = "timeout"
    TOO_LARGE = "too_large"  # the body passed the size limit; reading stopped
    CONNECTION_ERROR = "connection_error"  # refused, reset, truncated, bad answer
    DNS_ERROR = "dns_error"  # the host's name does not resolve
    ROBOTS = "robots"  # disallowed by robots.txt
    REDIRECT_LOOP = "redirect_loop"
    TOO_MANY_REDIRECTS = "too_many_redirects"
    BAD_REDIRECT = "bad_redirect"  # Location missing or not an http(s) URL
    OUT_OF_SCOPE = "out_of_scope"  # a redirect left the crawl's scope
    DUPLICATE = "duplicate"  # a redirect to a URL fetched already: not fetched again
    # a page whose canonical URL (crawler.process.canonical) is fetched already: counted,
    # not stored again
    CANONICAL_VARIANT = "canonical_variant"
    # a redirect to a host another daemon of a shared crawl holds: the target is queued
    # for that daemon, as a link would be
    REDIRECT_QUEUED = "redirect_queued"
    PRIVATE_NETWORK = "private_network"  # resolves to an address that is refused
    BAD_CONTENT = "bad_content"  # an HTML body that could not be decoded or parsed
    THROTTLED = "throttled"  # 429/503: the URL goes back to the frontier
    DEFERRED = "deferred"  # robots.txt unavailable: the URL goes back to the frontier
    INTERNAL_ERROR = "internal_error"  # a bug met while visiting or processing this URL
    # the host's turn went to its robots.txt, which allows the URL: the URL waits for the
    # host's next turn in the frontier, not in a visit (no fetch of the page was made)
    ROBOTS_FIRST = "robots_first"
    # the host's turn went to one of its sitemaps (crawler.fetch.sitemaps): the URL waits
    # for the host's next turn in the frontier, as after robots.txt
    SITEMAP_FIRST = "sitemap_first"

    @property
    def error(self) -> str | None:
        return None if self in (Outcome.OK, Outcome.NOT_HTML, Outcome.NOT_MODIFIED) else self.value

    @property
    def fetched_page(self) -> bool:
        """Whether the visit asked for the page, or tried to (every outcome but two)."""
        return self not in (Outcome.ROBOTS_FIRST, Outcome.SITEMAP_FIRST)
