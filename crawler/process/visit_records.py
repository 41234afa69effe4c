"""What a page's write records of its visit beside the page: the answers the server
sent (for the WARC file) and the URLs the visit reached (its redirects' targets, its
canonical URL), known and done from then on."""

from __future__ import annotations

from yarl import URL

import storage
from crawler.fetch.exchange import Exchange
from crawler.fetch.visit import Visit
from crawler.net.urls import host_key
from crawler.process.canonical import Canonical


def page_captures(visit: Visit) -> tuple[Exchange, ...]:
    """The page's answers, redirects included; robots.txt's are written apart."""
    return tuple(exchange for exchange in visit.exchanges if not exchange.robots)


def reached(visit: Visit, canonical: Canonical | None = None) -> list[storage.NewUrl]:
    """The redirect targets the visit took on, and the canonical URL the page is stored
    under: known and done from now on."""
    candidate = visit.candidate
    urls = [
        storage.NewUrl(hop, host_key(URL(hop, encoded=True)), candidate.depth, 0.0, candidate.url)
        for hop in visit.hops
    ]
    if canonical is not None:
        urls.append(
            storage.NewUrl(canonical.url, canonical.host, candidate.depth, 0.0, candidate.url)
        )
    return urls
