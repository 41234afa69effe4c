"""Visiting one URL: robots.txt, politeness and every redirect hop, one request at a time.

The dispatcher has already taken the first host's slot. Each request holds its host's
slot until its response has been read; a redirect then waits for the next host's turn,
is checked against scope, robots.txt and the network guard, and only then is fetched.
A visit waiting for a host's turn holds no connection: `waiting` counts them, so that
the engine can start other visits meanwhile; once the turn comes, the visit goes on
when the engine has a place to fetch (`may_fetch`), before any new visit. Holding a
host's slot, a visit first reads the host's state back if memory has dropped it
(`crawler.host_memory`), then consults its robots.txt.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections import Counter
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from yarl import URL

from crawler.exchange import Exchange
from crawler.fetched_urls import FetchedUrls
from crawler.fetcher import Fetcher, FetchError, Response
from crawler.host_memory import HostMemory
from crawler.outcomes import Outcome
from crawler.politeness import Feedback, Politeness
from crawler.robots import MAX_ROBOTS_REDIRECTS, RobotsCache, RobotsEntry, Verdict
from crawler.urls import BadUrlError, Scope, canonicalize, host_key
from policies import Candidate

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
THROTTLE_STATUSES = frozenset({429, 503})
POLL_INTERVAL = 0.25  # longest sleep while waiting for a host's turn


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

    @property
    def status(self) -> int | None:
        return None if self.response is None else self.response.status


class Visitor:
    def __init__(
        self,
        *,
        fetcher: Fetcher,
        fetched: FetchedUrls,
        politeness: Politeness,
        robots: RobotsCache,
        hosts: HostMemory,
        scope: Scope,
        max_redirects: int,
        max_retries: int,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
        on_waiting: Callable[[], None] = lambda: None,
        conditional_headers: Callable[[Candidate], Mapping[str, str]] = lambda candidate: {},
    ) -> None:
        self.fetcher = fetcher
        self.fetched = fetched
        self.politeness = politeness
        self.robots = robots
        self.hosts = hosts
        self.scope = scope
        self.max_redirects = max_redirects
        self.max_retries = max_retries
        self.clock = clock
        self.wall_clock = wall_clock
        self.on_waiting = on_waiting  # a visit began to wait for a host's turn
        self.may_fetch: Callable[[], bool] = lambda: True  # the engine has a place free
        self._waiting_hosts: Counter[str] = Counter()  # visits waiting for a host's turn
        self._place_freed = asyncio.Event()
        self.conditional_headers = conditional_headers  # for re-visits, of the first hop

    async def visit(self, candidate: Candidate) -> Visit:
        """Fetch `candidate`, whose host slot the caller has already taken. The redirect
        targets it takes on stay under way in `fetched` until the caller ends them."""
        waits: list[float] = []
        hops: list[str] = []
        exchanges: list[Exchange] = []
        robots_fetched: list[str] = []
        try:
            visit = await self._hops(candidate, waits, hops, exchanges, robots_fetched)
        except BaseException:
            self.fetched.end(hops)
            raise
        return dataclasses.replace(
            visit,
            waited=sum(waits),
            hops=tuple(hops),
            exchanges=tuple(exchanges),
            robots_fetched=tuple(robots_fetched),
        )

    async def _hops(
        self,
        candidate: Candidate,
        waits: list[float],
        hops: list[str],
        exchanges: list[Exchange],
        robots_fetched: list[str],
    ) -> Visit:
        url = URL(candidate.url, encoded=True)
        host = candidate.host
        held = True
        chain = {candidate.url}
        try:
            while True:
                await self.hosts.ensure(host)  # read back, if memory had dropped it
                entry = self.robots.get(host, self.wall_clock())
                if entry is None:
                    held = False  # _fetch_robots gives the slot back, whatever happens
                    try:
                        entry = await self._fetch_robots(url, host, waits, exchanges)
                    except FetchError as error:  # a refused address: no request was made
                        return Visit(candidate, error.outcome, str(url))
                    robots_fetched.append(host)
                    waits.append(await self.acquire(host))
                    held = True
                verdict = self.robots.verdict(entry, str(url))
                if verdict is not Verdict.ALLOW:
                    self.politeness.release(host)
                    held = False
                    if verdict is Verdict.UNAVAILABLE:
                        now = self.clock()
                        self.politeness.defer(host, now, now + self.robots.retry)
                        self.hosts.changed(host)
                        return Visit(candidate, Outcome.DEFERRED, str(url))
                    return Visit(candidate, Outcome.ROBOTS, str(url))

                started = self.clock()
                first_hop = len(chain) == 1
                try:
                    response = await self.fetcher.get(
                        url, self.conditional_headers(candidate) if first_hop else None
                    )
                except FetchError as error:
                    self._finish(host, Feedback.FAILURE)
                    held = False
                    return Visit(
                        candidate,
                        error.outcome,
                        str(url),
                        seconds=self.clock() - started,
                        fetched_at=_utc(self.wall_clock()),
                    )
                if response.exchange is not None:
                    exchanges.append(response.exchange)
                throttled = response.status in THROTTLE_STATUSES
                self._finish(
                    host,
                    Feedback.THROTTLED if throttled else Feedback.SUCCESS,
                    response.retry_after,
                )
                held = False
                fetched_at = _utc(self.wall_clock())
                seconds = self.clock() - started

                if response.status in REDIRECT_STATUSES and response.location:
                    try:
                        target = canonicalize(response.location, base=url)
                    except BadUrlError:
                        return Visit(
                            candidate, Outcome.BAD_REDIRECT, str(url), response, fetched_at
                        )
                    if str(target) in chain:
                        return Visit(
                            candidate, Outcome.REDIRECT_LOOP, str(target), response, fetched_at
                        )
                    chain.add(str(target))
                    if len(chain) - 1 > self.max_redirects:
                        return Visit(
                            candidate, Outcome.TOO_MANY_REDIRECTS, str(target), response, fetched_at
                        )
                    if not self.scope.allows(target):
                        return Visit(
                            candidate, Outcome.OUT_OF_SCOPE, str(target), response, fetched_at
                        )
                    if not await self.fetched.claim(str(target)):
                        return Visit(
                            candidate, Outcome.DUPLICATE, str(target), response, fetched_at
                        )
                    hops.append(str(target))
                    url, host = target, host_key(target)
                    waits.append(await self.acquire(host))
                    held = True
                    continue
                return Visit(
                    candidate,
                    self._outcome(candidate, response),
                    str(url),
                    response,
                    fetched_at,
                    seconds,
                )
        finally:
            if held:  # cancelled or failed while holding the slot: give it back
                self.politeness.release(host)

    @property
    def waiting(self) -> int:
        """Visits waiting part-way for a host's turn."""
        return self._waiting_hosts.total()

    @property
    def waiting_hosts(self) -> Collection[str]:
        """The hosts whose turn visits wait for."""
        return self._waiting_hosts.keys()

    def waiting_ready(self, now: float) -> int:
        """Waiting visits whose host's turn has come: they go before any new visit."""
        return sum(n for host, n in self._waiting_hosts.items() if self.politeness.ready(host, now))

    def place_freed(self) -> None:
        """A visit ended: the waiting ones look again."""
        self._place_freed.set()
        self._place_freed.clear()

    async def acquire(self, host: str) -> float:
        """Wait for `host`'s turn, then take its slot; the seconds waited."""
        now = started = self.clock()
        if self.politeness.ready(host, now):  # the visit keeps its place to fetch
            self.politeness.start(host, now)
            return 0.0
        self._waiting_hosts[host] += 1
        self.on_waiting()
        try:
            while True:
                ready_at = self.politeness.ready_at(host)
                if ready_at is None or ready_at <= now:  # no place yet: until one is freed
                    wait = POLL_INTERVAL
                else:
                    wait = min(ready_at - now, POLL_INTERVAL)
                # a timeout scope, not wait_for: that would make a task of every wait
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(max(wait, 0.001)):
                        await self._place_freed.wait()
                now = self.clock()
                if self.politeness.ready(host, now) and self.may_fetch():
                    self.politeness.start(host, now)
                    return now - started
        finally:
            self._waiting_hosts[host] -= 1
            if not self._waiting_hosts[host]:
                del self._waiting_hosts[host]

    def _outcome(self, candidate: Candidate, response: Response) -> Outcome:
        if response.status == 304 and candidate.revisit:
            return Outcome.NOT_MODIFIED
        if response.status in THROTTLE_STATUSES and candidate.attempts < self.max_retries:
            return Outcome.THROTTLED
        if response.status >= 400 or response.status in REDIRECT_STATUSES:
            return Outcome.HTTP_ERROR
        if response.truncated:
            return Outcome.TOO_LARGE
        if not response.is_html:
            return Outcome.NOT_HTML
        return Outcome.OK

    async def _fetch_robots(
        self, url: URL, host: str, waits: list[float], exchanges: list[Exchange]
    ) -> RobotsEntry:
        """Fetch and cache `host`'s robots.txt, holding its slot; gives the slot back.

        Redirects are followed here, up to five (RFC 9309), each hop in its own host's
        turn and through the fetcher, so the network guard sees every address. Raises
        FetchError only when `host` itself is refused: no request was made.
        """
        target, hop_host = url.origin().with_path("/robots.txt"), host
        status: int | None = None  # no answer: unavailable
        holding: str | None = host  # the slot to give back if this is cancelled or fails
        try:
            for hop in range(MAX_ROBOTS_REDIRECTS + 1):
                if hop:
                    waits.append(await self.acquire(hop_host))
                    holding = hop_host
                try:
                    response = await self.fetcher.get_robots(target)
                except FetchError as error:
                    holding = None
                    if error.outcome is not Outcome.PRIVATE_NETWORK:
                        self._finish(hop_host, Feedback.FAILURE)
                        break
                    self.politeness.release(hop_host)  # no request was made
                    if hop == 0:
                        raise
                    break
                if response.exchange is not None:
                    exchanges.append(response.exchange)
                throttled = response.status in THROTTLE_STATUSES
                feedback = Feedback.THROTTLED if throttled else Feedback.SUCCESS
                redirect = response.status in REDIRECT_STATUSES and response.location
                if not redirect:  # the rules first: their Crawl-delay spaces this request
                    entry = self._store_robots(host, response.status, response.text())
                holding = None
                self._finish(hop_host, feedback, response.retry_after)
                if not redirect:
                    return entry
                try:
                    target = canonicalize(response.location or "", base=target)
                except BadUrlError:
                    break  # a redirect to nowhere: unavailable
                hop_host = host_key(target)
            else:
                status = 404  # not reached within five redirects: unavailable, so allowed
        finally:
            if holding is not None:
                self.politeness.release(holding)
        return self._store_robots(host, status, None)

    def _store_robots(self, host: str, status: int | None, body: str | None) -> RobotsEntry:
        entry = self.robots.store(host, status, body, self.wall_clock())
        self.politeness.set_crawl_delay(host, self.robots.crawl_delay(entry))
        return entry

    def _finish(self, host: str, feedback: Feedback, retry_after: float | None = None) -> None:
        self.politeness.finish(host, self.clock(), feedback, retry_after)
        self.hosts.changed(host)


def _utc(timestamp: float) -> datetime:
    return datetime.fromtimestamp(timestamp, UTC)
