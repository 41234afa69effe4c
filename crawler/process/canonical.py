"""Canonical URLs: the URL a page names as its own, and whether the crawl takes it.

A page names its canonical URL with a `<link rel=canonical href>` in its head (resolved
against the document's base URL, as its links are) or a `Link: <...>; rel="canonical"`
header (`crawler.net.link_header`, resolved against the page's final URL). Declarations
that disagree name none, as do those that cannot be read, and a link in the body.

The crawl takes a page's canonical URL (`taken`) only where it is on the page's own host
and in the crawl's scope, its URL filters included: a host speaks for its own pages.
Elsewhere it is a hint, ignored, and nothing is fetched because of it. A canonical URL
that is the page's own, or one its redirects passed through, is the usual case: nothing
follows from it. Taken, the URL is claimed as a redirect's target is
(`FetchedUrls.claim`, by `crawler.process.processing`): not fetched nor under way, the
page is stored under it and it is reached, never fetched; fetched or under way, the page
is a variant of it, counted and not stored again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from selectolax.lexbor import LexborNode
from yarl import URL

from crawler.net.link_header import targets
from crawler.net.scope import Scope
from crawler.net.urls import BadUrlError, Base, canonical, host_key

MAX_DECLARATIONS = 16  # <link rel=canonical> read in a head; a page naming more names none


@dataclass(frozen=True, slots=True)
class Canonical:
    """A page's canonical URL, taken: stored under it, or (`variant`) a variant of it."""

    url: str
    host: str
    variant: bool = False  # the URL is fetched already, or being fetched


def declared(
    head: LexborNode | None,
    base: Base,
    resolve: Callable[[str, Base], str | None],
    *,
    link: str | None,
    url: str,
) -> str | None:
    """The canonical URL a page declares in its `head` (hrefs resolved by `resolve`
    against `base`) and its `link` header (against its URL), if all its declarations
    that can be read name one URL."""
    found: set[str] = set()
    if head is not None:
        for node in head.css("link[rel~=canonical i]")[:MAX_DECLARATIONS]:
            href = node.attributes.get("href")
            resolved = resolve(href, base) if href else None
            if resolved is not None:
                found.add(resolved)
    if link:
        for target in targets(link, "canonical")[:MAX_DECLARATIONS]:
            try:
                found.add(canonical(target, url))
            except BadUrlError:
                continue
    return found.pop() if len(found) == 1 else None


def taken(declared: str, *, chain: Sequence[str], depth: int, scope: Scope) -> Canonical | None:
    """The page's declared canonical URL, if the crawl takes it (still to be claimed):
    `chain` holds the URLs the page's visit asked for, its final URL last; `depth`
    is the page's."""
    if declared in chain:
        return None
    target = URL(declared, encoded=True)
    host = host_key(target)
    page_host = host_key(URL(chain[-1], encoded=True))
    if host != page_host or not scope.allows(target, depth):
        return None
    return Canonical(declared, host)
