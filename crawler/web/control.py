"""The API's part that reads and steers the engine: the status, pause, resume and seeds.
It is served in the crawl's process, by the metrics server on a Unix socket only the
daemon's server process reaches (`crawler.web.server_process`), on that server's thread;
each answer is worked out on the crawl's loop, in one turn of it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from aiohttp import web
from sqlalchemy.exc import SQLAlchemyError

import storage
from crawler.counts import Counts
from crawler.engine.engine import Engine
from crawler.net.scope import Scope
from crawler.net.urls import BadUrlError, canonicalize, host_key
from crawler.startup import SEED_SCORE
from crawler.web.auth import authorize
from crawler.web.errors import ApiError, errors_as_json
from crawler.web.requests import MAX_BODY, Field, bad_request, check_query, json_object
from crawler.web.routes import MAX_SEEDS, PREFIX

URLS = Field(
    f"a list of 1 to {MAX_SEEDS} URL strings",
    lambda value: (
        isinstance(value, list)
        and 0 < len(value) <= MAX_SEEDS
        and all(isinstance(url, str) for url in value)
    ),
)

T = TypeVar("T")


class Control:
    """Made on the crawl's loop; its handlers run on the metrics server's thread and hop
    to the crawl's loop for what reads or changes the engine."""

    def __init__(
        self,
        *,
        engine: Engine,
        scope: Scope,
        token: str | None,
        relevance_threshold: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.engine = engine
        self.scope = scope
        self.token = token
        self.relevance_threshold = relevance_threshold
        self.clock = clock
        self.started = clock()
        self._crawl_loop = asyncio.get_running_loop()

    async def on_crawl_loop(self, work: Coroutine[Any, Any, T]) -> T:
        """`work`, run on the crawl's loop; its result or its exception."""
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(work, self._crawl_loop))

    def app(self) -> web.Application:
        app = web.Application(client_max_size=MAX_BODY, middlewares=[errors_as_json])
        app.router.add_routes(
            [
                web.get(f"{PREFIX}/status", self.status),
                web.post(f"{PREFIX}/seeds", self.add_seeds),
                web.post(f"{PREFIX}/pause", self.pause),
                web.post(f"{PREFIX}/resume", self.resume),
            ]
        )
        return app

    async def status(self, request: web.Request) -> web.Response:
        check_query(request, set())
        return web.json_response(await self.on_crawl_loop(self._status_now()))

    async def _status_now(self) -> dict[str, Any]:
        return self._status()

    def _status(self) -> dict[str, Any]:
        engine = self.engine
        summary = engine.summary
        counts = Counts.of(summary.outcomes, relevant=summary.relevant)
        seconds = max(self.clock() - self.started, 1e-9)
        return {
            "state": "paused" if engine.paused else "running",
            "pages": counts.pages,
            "relevant": counts.relevant,
            "visited": counts.visited,
            "errors": sum(counts.errors.values()),
            "pages_per_second": round(summary.fetched / seconds, 2),
            "hosts": _hosts_at_work(engine),
            "frontier": engine.frontier.queued,
            "in_flight": engine.in_flight,
            "seconds": round(seconds, 1),
            "relevance_threshold": self.relevance_threshold,
            "changes_allowed": self.token is not None,
        }

    async def pause(self, request: web.Request) -> web.Response:
        authorize(request, self.token)
        await json_object(request, {})

        async def pause() -> dict[str, Any]:
            self.engine.pause()
            return self._status()

        return web.json_response(await self.on_crawl_loop(pause()))

    async def resume(self, request: web.Request) -> web.Response:
        authorize(request, self.token)
        await json_object(request, {})

        async def resume() -> dict[str, Any]:
            self.engine.resume()
            return self._status()

        return web.json_response(await self.on_crawl_loop(resume()))

    async def add_seeds(self, request: web.Request) -> web.Response:
        """Queue URLs as the seeds given at start are queued: canonical, at depth 0,
        with a seed's score, within the crawl's scope; none if any is not."""
        authorize(request, self.token)
        body = await json_object(request, {"urls": URLS})
        seeds, invalid = [], []
        for raw in body["urls"]:
            try:
                url = canonicalize(raw)
            except BadUrlError as error:
                invalid.append({"url": raw, "reason": f"not a crawlable URL: {error}"})
                continue
            if not self.scope.allows(url):
                invalid.append({"url": raw, "reason": self._refusal(str(url))})
                continue
            seeds.append(url)
        if invalid:
            raise bad_request(
                f"{len(invalid)} of the URLs cannot be crawled; none was queued",
                invalid=invalid,
            )
        new = [storage.NewUrl(str(url), host_key(url), 0, SEED_SCORE) for url in seeds]
        try:
            queued = {url.url for url in await self.on_crawl_loop(self.engine.queue_urls(new))}
        except (SQLAlchemyError, OSError) as error:
            raise ApiError(503, f"the database cannot be written: {error}") from error
        # in the order given; a URL given twice is known the second time
        answer: dict[str, list[str]] = {"queued": [], "known": []}
        for seed in map(str, seeds):
            answer["queued" if seed in queued else "known"].append(seed)
            queued.discard(seed)
        return web.json_response(answer)

    def _refusal(self, url: str) -> str:
        why = self.scope.urls.refusal(url)
        if why is not None:
            return f"outside the crawl's scope: {why}"
        domains = ", ".join(sorted(self.scope.domains))
        return f"outside the crawl's scope: its host is not under {domains}, nor in a trap path"


def _hosts_at_work(engine: Engine) -> int:
    """Hosts with URLs queued (in memory or in the database only) or under way."""
    frontier = engine.frontier
    hosts = set(frontier.hosts())
    hosts.update(host for host, count in frontier.spilled_hosts.items() if count > 0)
    hosts.update(frontier.busy_hosts())
    return len(hosts)
