"""Visiting one URL: robots.txt, politeness and every redirect hop, one request at a time.

Every request is made in its host's turn (`crawler.fetch.host_turns`): the dispatcher has
taken the first host's; a redirect then waits for the next host's, is checked against
scope, robots.txt and the network guard, and only then is fetched. Holding a host's
turn, a visit first reads the host's state back if memory has dropped it
(`crawler.fetch.host_memory`), then consults its robots.txt, fetching it in that turn if it
is not known. A URL whose host's turn went to its robots.txt ends its visit there
(`ROBOTS_FIRST`) and waits for the next turn in the frontier, holding nothing; a
redirect's target waits in its visit. The next turn of a host whose sitemaps are
still to be read (`crawler.fetch.sitemaps`) goes to one of them, as it would to
robots.txt (`SITEMAP_FIRST`, `crawler.fetch.sitemap_turns`): asked only if robots.txt
allows it, through the fetcher and the network guard, and followed by the host's delay.
Where a visit ends it has gathered the facts its outcome is decided from
(`crawler.fetch.deciding`), with whether it is tried again.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from yarl import URL

from crawler.fetch.deciding import REDIRECT_STATUSES, Facts, decide
from crawler.fetch.exchange import Exchange
from crawler.fetch.fetched_urls import FetchedUrls
from crawler.fetch.fetcher import NO_REQUEST_MADE, Fetcher, FetchError, Response
from crawler.fetch.host_memory import HostMemory
from crawler.fetch.host_turns import HostTurns, Turn
from crawler.fetch.politeness import Feedback, answer_feedback
from crawler.fetch.robots import MAX_ROBOTS_REDIRECTS, RobotsCache, RobotsEntry, Verdict
from crawler.fetch.sitemap_turns import read_next_sitemap
from crawler.fetch.sitemaps import SitemapRead
from crawler.net.scope import Scope
from crawler.net.urls import BadUrlError, canonicalize, host_key
from crawler.outcomes import Outcome
from policies import Candidate

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Visit:
    candidate: Candidate
    outcome: Outcome
    final_url: str | None = None
    response: Response | None = None
    fetched_at: datetime | None = None
    seconds: float = 0.0  # time spent on the page's own request
    waited: float = 0.0  # time spent part-way waiting for a host's turn, not fetching
    hops: tuple[str, ...] = ()  # the redirect targets taken on, in order
    exchanges: tuple[Exchange, ...] = ()  # every answer, robots.txt too, when captured
    robots_fetched: tuple[str, ...] = ()  # hosts whose robots.txt this visit fetched
    sitemap: SitemapRead | None = None  # the sitemap its host's turn went to
    again: bool = False  # back to the frontier for another try (`crawler.fetch.deciding`)

    @property
    def status(self) -> int | None:
        return None if self.response is None else self.response.status


@dataclass(slots=True)
class _Trail:
    """What a visit gathers on its way, for its `Visit`."""

    waited: float = 0.0
    hops: list[str] = field(default_factory=list)
    exchanges: list[Exchange] = field(default_factory=list)
    robots_fetched: list[str] = field(default_factory=list)
    robots_asking: dict[str, asyncio.Event] = field(default_factory=dict)  # by this visit

    def answer(self, response: Response) -> None:
        if response.exchange is not None:
            self.exchanges.append(response.exchange)


class Visitor:
    def __init__(
        self,
        *,
        fetcher: Fetcher,
        fetched: FetchedUrls,
        turns: HostTurns,
        robots: RobotsCache,
        hosts: HostMemory,
        scope: Scope,
        max_redirects: int,
        max_retries: int,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
        conditional_headers: Callable[[Candidate], Mapping[str, str]] = lambda candidate: {},
        holds: Callable[[str], bool] = lambda host: True,
    ) -> None:
        self.fetcher = fetcher
        self.fetched = fetched
        self.turns = turns
        self.politeness = turns.politeness
        self.robots = robots
        self.hosts = hosts
        self.scope = scope
        self.max_redirects = max_redirects
        self.max_retries = max_retries  # tries of a URL throttled or deferred
        self.clock = clock
        self.wall_clock = wall_clock
        self.conditional_headers = conditional_headers  # for re-visits, of the first hop
        # whether this daemon may visit a host: in a shared crawl, only those it holds
        self.holds = holds
        # hosts whose robots.txt a visit is asking for: set once their rules are stored
        self._robots_asked: dict[str, asyncio.Event] = {}

    async def visit(self, candidate: Candidate) -> Visit:
        """Fetch `candidate`, whose host's turn the dispatcher has taken. The redirect
        targets it takes on stay under way in `fetched` until the caller ends them."""
        trail = _Trail()
        try:
            visit = await self._hops(candidate, trail)
        except BaseException:
            self.fetched.end(trail.hops)
            raise
        finally:  # an ask that ended without rules (refused, cancelled): others ask again
            for host, asked in trail.robots_asking.items():
                if self._robots_asked.get(host) is asked:
                    del self._robots_asked[host]
                asked.set()
        return dataclasses.replace(
            visit,
            waited=trail.waited,
            hops=tuple(trail.hops),
            exchanges=tuple(trail.exchanges),
            robots_fetched=tuple(trail.robots_fetched),
        )

    async def _hops(self, candidate: Candidate, trail: _Trail) -> Visit:
        url, host = URL(candidate.url, encoded=True), candidate.host
        chain = {candidate.url}
        taken = True  # the first host's turn, by the dispatcher
        # robots.txt just asked for this host: its rules, or where it redirected
        found: RobotsEntry | URL | None = None
        asked: asyncio.Event | None = None  # another visit's ask for robots.txt
        while True:
            if isinstance(found, URL):
                found = await self._follow_robots(host, found, trail)
            if asked is not None:  # its rules serve this visit too; no turn held meanwhile
                waiting_since = self.clock()
                await asked.wait()
                trail.waited += self.clock() - waiting_since
                asked = None
            async with self.turns.take(host, taken=taken) as turn:
                taken = False
                trail.waited += turn.waited
                await self.hosts.ensure(host)  # read back, if memory had dropped it
                entry = found or self.robots.get(host, self.wall_clock())
                found = None
                if entry is None and host in self._robots_asked:
                    asked = self._robots_asked[host]
                    continue  # the turn is given back unused: no request, no delay
                if entry is None:  # asked in this turn; the page waits for the next
                    trail.robots_asking[host] = self._robots_asked[host] = asyncio.Event()
                    robots = url.origin().with_path("/robots.txt")
                    try:
                        found = await self._ask_robots(turn, host, robots, trail, first=True)
                    except FetchError as error:  # no request made: refused, or no such name
                        return self._ended(candidate, Facts(met=error.outcome), str(url))
                    trail.robots_fetched.append(host)
                    if len(chain) > 1 or isinstance(found, URL):
                        continue  # a redirect's target waits here for the next turn
                    entry, found = found, None  # the rules, read in this turn
                verdict = self.robots.verdict(entry, str(url))
                if verdict is Verdict.UNAVAILABLE:
                    now = self.clock()
                    self.politeness.defer(host, now, now + self.robots.retry)
                    self.hosts.changed(host)
                    return self._ended(candidate, Facts(met=Outcome.DEFERRED), str(url))
                if turn.feedback is None and len(chain) == 1 and not candidate.revisit:
                    read = await read_next_sitemap(
                        turn,
                        fetcher=self.fetcher,
                        robots=self.robots,
                        sitemaps=self.hosts.sitemaps,
                        host=host,
                        origin=url.origin(),
                        entry=entry,
                    )
                    if read is not None:
                        visit = self._ended(candidate, Facts(met=Outcome.SITEMAP_FIRST), str(url))
                        return dataclasses.replace(visit, sitemap=read)
                if verdict is Verdict.DISALLOW:
                    return self._ended(candidate, Facts(met=Outcome.ROBOTS), str(url))
                if turn.feedback is not None:
                    # the turn went to robots.txt: the URL's next turn comes through the
                    # frontier, which gives the wait to other hosts' URLs
                    return self._ended(candidate, Facts(met=Outcome.ROBOTS_FIRST), str(url))
                started = self.clock()
                first_hop = len(chain) == 1
                try:
                    response = await self.fetcher.get(
                        url, self.conditional_headers(candidate) if first_hop else None
                    )
                except FetchError as error:
                    turn.answered(Feedback.FAILURE)
                    return self._ended(
                        candidate,
                        Facts(met=error.outcome),
                        str(url),
                        seconds=self.clock() - started,
                        fetched_at=_utc(self.wall_clock()),
                    )
                trail.answer(response)
                turn.answered(answer_feedback(response.status), response.retry_after)
            fetched_at = _utc(self.wall_clock())
            seconds = self.clock() - started
            if response.status not in REDIRECT_STATUSES or not response.location:
                facts = _answered(response)
                return self._ended(candidate, facts, str(url), response, fetched_at, seconds)
            try:
                target = canonicalize(response.location, base=url)
            except BadUrlError:
                facts = Facts(met=Outcome.BAD_REDIRECT)
                return self._ended(candidate, facts, str(url), response, fetched_at)
            refused = self._refused_hop(chain, target)
            if refused is None and host_key(target) != host and not self.holds(host_key(target)):
                refused = Outcome.REDIRECT_QUEUED  # its holder fetches it, in its turn
            if refused is None and not await self.fetched.claim(str(target)):
                refused = Outcome.DUPLICATE
            if refused is not None:
                facts = Facts(met=refused)
                return self._ended(candidate, facts, str(target), response, fetched_at)
            chain.add(str(target))
            trail.hops.append(str(target))
            url, host = target, host_key(target)

    def _refused_hop(self, chain: set[str], target: URL) -> Outcome | None:
        """Why a redirect to `target` is not followed, if it is not."""
        if str(target) in chain:
            return Outcome.REDIRECT_LOOP
        if len(chain) > self.max_redirects:
            return Outcome.TOO_MANY_REDIRECTS
        if not self.scope.allows(target):
            return Outcome.OUT_OF_SCOPE
        return None

    def failed(self, candidate: Candidate) -> Visit:
        """The visit of `candidate` ended by a bug met on it, its outcome decided."""
        return self._ended(candidate, Facts(failed=True), candidate.url)

    def _ended(
        self,
        candidate: Candidate,
        facts: Facts,
        final_url: str,
        response: Response | None = None,
        fetched_at: datetime | None = None,
        seconds: float = 0.0,
    ) -> Visit:
        """The visit, its outcome decided from what it found and the URL's tries."""
        facts = dataclasses.replace(facts, revisit=candidate.revisit, tries=candidate.attempts)
        outcome, again = decide(facts, max_retries=self.max_retries)
        return Visit(candidate, outcome, final_url, response, fetched_at, seconds, again=again)

    async def _follow_robots(self, host: str, target: URL, trail: _Trail) -> RobotsEntry:
        """Follow `host`'s robots.txt redirects from `target`, up to five in all (RFC
        9309), each hop in its own host's turn and through the fetcher, so the network
        guard sees every address; the rules found, stored."""
        for _ in range(MAX_ROBOTS_REDIRECTS):
            async with self.turns.take(host_key(target)) as hop:
                trail.waited += hop.waited
                found = await self._ask_robots(hop, host, target, trail)
            if not isinstance(found, URL):
                return found
            target = found
        return self._store_robots(host, 404, None)  # not within five: allows everything

    async def _ask_robots(
        self, turn: Turn, host: str, target: URL, trail: _Trail, *, first: bool = False
    ) -> RobotsEntry | URL:
        """One request for `host`'s robots.txt at `target`, in `turn`: the rules found
        (stored before the turn ends: their Crawl-delay spaces this request), or where
        a redirect leads. Raises FetchError only when the `first` request could not be
        made (its address refused, its name not found)."""
        try:
            response = await self.fetcher.get_robots(target)
        except FetchError as error:
            if error.outcome in NO_REQUEST_MADE:
                if first:
                    raise
            else:
                turn.answered(Feedback.FAILURE)
            return self._store_robots(host, None, None)  # no answer: unavailable
        trail.answer(response)
        turn.answered(answer_feedback(response.status), response.retry_after)
        if response.status in REDIRECT_STATUSES and response.location:
            try:
                return canonicalize(response.location, base=target)
            except BadUrlError:
                return self._store_robots(host, None, None)  # a redirect to nowhere
        return self._store_robots(host, response.status, response.text())

    def _store_robots(self, host: str, status: int | None, body: str | None) -> RobotsEntry:
        entry = self.robots.store(host, status, body, self.wall_clock())
        self.politeness.set_crawl_delay(host, self.robots.crawl_delay(entry))
        asked = self._robots_asked.pop(host, None)
        if asked is not None:  # the visits waiting for these rules go on
            asked.set()
        return entry


def _answered(response: Response) -> Facts:
    return Facts(status=response.status, truncated=response.truncated, html=response.is_html)


def _utc(timestamp: float) -> datetime:
    return datetime.fromtimestamp(timestamp, UTC)
