"""A host's turn given to one of its sitemaps (`crawler.fetch.sitemaps`): the next file
robots.txt allows, asked for through the fetcher and its network guard, and what its
answer gives: its page URLs; an index's sitemaps, and a redirect's target on the same
host, go to the host's plan."""

from __future__ import annotations

import contextlib
import dataclasses
import logging

from yarl import URL

from crawler.fetch.deciding import REDIRECT_STATUSES
from crawler.fetch.fetcher import NO_REQUEST_MADE, Fetcher, FetchError, Response
from crawler.fetch.host_turns import Turn
from crawler.fetch.politeness import Feedback, answer_feedback
from crawler.fetch.robots import RobotsCache, RobotsEntry, Verdict
from crawler.fetch.sitemap_xml import SitemapReader
from crawler.fetch.sitemaps import MAX_INDEX_DEPTH, HostSitemaps, SitemapRead, Sitemaps
from crawler.net.urls import BadUrlError, canonicalize, host_key
from crawler.outcomes import Outcome

log = logging.getLogger(__name__)

# a sitemap whose request ended so is asked for once more, later (an answer of 429 or
# 5xx too): the server or the way to it may be back by then
PASSING_FAILURES = frozenset({Outcome.TIMEOUT, Outcome.CONNECTION_ERROR})


async def read_next_sitemap(
    turn: Turn,
    *,
    fetcher: Fetcher,
    robots: RobotsCache,
    sitemaps: Sitemaps,
    host: str,
    origin: URL,
    entry: RobotsEntry,
) -> SitemapRead | None:
    """Ask for the next of `host`'s sitemaps robots.txt allows, in `turn`; None when
    none is left to ask for (those robots.txt disallows are passed over unasked) or
    no request could be made (the page meets the same)."""
    plan = sitemaps.plan(host, origin, entry)
    while plan is not None and not sitemaps.spent(plan):
        planned = plan.next_file()
        if planned is None:
            return None
        url, depth = planned
        if robots.verdict(entry, url) is not Verdict.ALLOW:
            log.debug("sitemap %s: disallowed by robots.txt, not asked for", url)
            continue
        reader = sitemaps.reader(plan)
        try:
            response = await fetcher.get_sitemap(URL(url, encoded=True), reader.feed)
        except FetchError as error:
            if error.outcome in NO_REQUEST_MADE:
                return None
            turn.answered(Feedback.FAILURE)
            log.debug("sitemap %s: %s", url, error.outcome)
            if error.outcome in PASSING_FAILURES:
                plan.try_again(url, depth)
            return SitemapRead(host, url, "failed")
        turn.answered(answer_feedback(response.status), response.retry_after)
        read = _sitemap_read(plan, host, url, depth, response, reader)
        if response.exchange is None:
            return read
        return dataclasses.replace(read, captures=(response.exchange,))
    return None


def _sitemap_read(
    plan: HostSitemaps,
    host: str,
    url: str,
    depth: int,
    response: Response,
    reader: SitemapReader,
) -> SitemapRead:
    """What one sitemap's answer gave."""
    if response.status in REDIRECT_STATUSES and response.location:
        with contextlib.suppress(BadUrlError):
            target = canonicalize(response.location, base=URL(url, encoded=True))
            if host_key(target) == host:
                plan.add(str(target), depth)
        return SitemapRead(host, url, "redirected")
    if not 200 <= response.status < 300:
        log.debug("sitemap %s: status %d", url, response.status)
        if response.status == 429 or 500 <= response.status < 600:
            plan.try_again(url, depth)
        return SitemapRead(host, url, "failed")
    reader.close()
    plan.urls += len(reader.entries)
    plan.size += reader.size
    if reader.cut is not None:
        log.warning("sitemap %s: read to its limit of %s, the rest ignored", url, reader.cut)
    if reader.error is not None:
        log.debug("sitemap %s: %s", url, reader.error)
    result = "cut" if reader.cut else "failed" if reader.error else "read"
    if reader.kind != "sitemapindex":
        return SitemapRead(host, url, result, tuple(reader.entries))
    if depth >= MAX_INDEX_DEPTH:
        log.debug("sitemap %s: an index %d levels down, not followed", url, depth)
        return SitemapRead(host, url, result)
    for listed in reader.entries:
        with contextlib.suppress(BadUrlError):
            child = canonicalize(listed.loc, base=URL(url, encoded=True))
            if host_key(child) == host:
                plan.add(str(child), depth + 1)
    return SitemapRead(host, url, result)
