"""The daemon's HTTP API, JSON in and out (docs/api.md; the OpenAPI document is
`crawler.web.openapi`). Reading is open to whoever reaches the server; a change (seeds,
pause, resume, labels) needs the bearer token (`crawler.web.auth`).

    GET  /api/v1/status                 the crawl at a glance
    POST /api/v1/seeds                  queue URLs as seeds, at once
    POST /api/v1/pause, /api/v1/resume  stop dispatching, and go on
    GET  /api/v1/search                 the collection's search (`crawler search`)
    GET  /api/v1/pages/{id}             a page: its fetch, main text and outlinks
    POST /api/v1/pages/{id}/label       a user's judgement of a page: relevant or not
    GET  /api/v1/pages?sort=uncertain   the pages worth labelling next
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from aiohttp import web
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine

import storage
from crawler.counts import Counts
from crawler.engine.engine import Engine
from crawler.net.scope import Scope
from crawler.net.urls import BadUrlError, canonicalize, host_key
from crawler.startup import SEED_SCORE
from crawler.web.auth import authorize
from crawler.web.errors import ApiError
from crawler.web.requests import (
    Field,
    bad_request,
    check_query,
    json_object,
    query_float,
    query_int,
)
from storage.labels import save_label, uncertain_pages
from storage.pages import PageDetail, page_detail, url_ids

PREFIX = "/api/v1"
MAX_SEEDS = 1_000  # URLs one request may add
MAX_HITS = 100  # a search's or a list of pages' limit, at most

URLS = Field(
    f"a list of 1 to {MAX_SEEDS} URL strings",
    lambda value: (
        isinstance(value, list)
        and 0 < len(value) <= MAX_SEEDS
        and all(isinstance(url, str) for url in value)
    ),
)
RELEVANT = Field("true or false", lambda value: isinstance(value, bool))

T = TypeVar("T")


class Api:
    """The handlers run on the server's loop, on a thread of its own
    (`crawler.telemetry.metrics_server`), with an engine of their own for the database:
    a crawl at full speed keeps its loop busy (pages analysed, batches written), and
    each statement of a search waited for a turn of it (beside tasks taking 10 ms of CPU
    a turn, a search took 2.6 s there and 0.25 s on a loop of its own). What reads or
    changes the engine (the status, pause, resume, seeds) runs on the crawl's loop,
    where the Api is made: one turn of it, not one for each step of a request."""

    def __init__(
        self,
        *,
        engine: Engine,
        db_url: str,
        scope: Scope,
        token: str | None,
        relevance_threshold: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.engine = engine
        self.db_url = db_url
        self.scope = scope
        self.token = token
        self.relevance_threshold = relevance_threshold
        self.clock = clock
        self.started = clock()
        self._crawl_loop = asyncio.get_running_loop()
        self._db: AsyncEngine | None = None  # opened on the server's loop, at first use

    @property
    def db(self) -> AsyncEngine:
        if self._db is None:
            self._db = storage.open_engine(self.db_url)
        return self._db

    async def close(self, _app: web.Application | None = None) -> None:
        """Close the API's engine (on the server's loop, as the app is cleaned up)."""
        if self._db is not None:
            await self._db.dispose()
            self._db = None

    async def on_crawl_loop(self, work: Coroutine[Any, Any, T]) -> T:
        """`work`, run on the crawl's loop; its result or its exception."""
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(work, self._crawl_loop))

    def routes(self) -> list[web.RouteDef]:
        return [
            web.get(f"{PREFIX}/status", self.status),
            web.post(f"{PREFIX}/seeds", self.add_seeds),
            web.post(f"{PREFIX}/pause", self.pause),
            web.post(f"{PREFIX}/resume", self.resume),
            web.get(f"{PREFIX}/search", self.search),
            web.get(PREFIX + "/pages/{id}", self.page),
            web.post(PREFIX + "/pages/{id}/label", self.label),
            web.get(f"{PREFIX}/pages", self.pages),
        ]

    # -- the crawl -------------------------------------------------------------------

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

    # -- the collection --------------------------------------------------------------

    async def search(self, request: web.Request) -> web.Response:
        check_query(request, {"q", "limit", "min_relevance"})
        query = request.query.get("q", "")
        try:
            storage.search.query_words(query)
        except ValueError as error:
            raise bad_request(f"q: {error}") from None
        limit = query_int(request, "limit", default=10, low=1, high=MAX_HITS)
        least = query_float(request, "min_relevance", low=0.0, high=1.0)
        try:
            async with self.db.connect() as connection:
                hits = await storage.search_pages(
                    connection, query, limit=limit, min_relevance=least
                )
                ids = await url_ids(connection, [hit.url for hit in hits])
        except (SQLAlchemyError, OSError) as error:
            raise ApiError(503, f"the database cannot be read: {error}") from error
        return web.json_response(
            {
                "query": query,
                "hits": [
                    {
                        "id": ids.get(hit.url),
                        "url": hit.url,
                        "title": hit.title,
                        "host": hit.host,
                        "relevance": _rounded(hit.relevance),
                        "score": round(hit.score, 4),
                        "snippet": hit.snippet,
                    }
                    for hit in hits
                ],
            }
        )

    async def page(self, request: web.Request) -> web.Response:
        check_query(request, set())
        url_id = _page_id(request)
        try:
            async with self.db.connect() as connection:
                page = await page_detail(connection, url_id)
        except (SQLAlchemyError, OSError) as error:
            raise ApiError(503, f"the database cannot be read: {error}") from error
        if page is None:
            raise ApiError(404, f"no page with id {url_id} has been fetched")
        return web.json_response(_page_json(page))

    async def label(self, request: web.Request) -> web.Response:
        authorize(request, self.token)
        url_id = _page_id(request)
        body = await json_object(request, {"relevant": RELEVANT})
        try:
            saved = await save_label(self.db, url_id, body["relevant"])
        except (SQLAlchemyError, OSError) as error:
            raise ApiError(503, f"the database cannot be written: {error}") from error
        if not saved:
            raise ApiError(404, f"no page with id {url_id} is stored with its text")
        return web.json_response({"id": url_id, "relevant": body["relevant"]})

    async def pages(self, request: web.Request) -> web.Response:
        """The pages worth labelling next: those the topic model is least sure of."""
        check_query(request, {"sort", "limit"})
        sort = request.query.get("sort")
        if sort != "uncertain":
            said = "" if sort is None else f", not {sort!r:.40}"
            raise bad_request(f"sort must be uncertain{said} (the pages worth labelling next)")
        limit = query_int(request, "limit", default=10, low=1, high=MAX_HITS)
        try:
            found = await uncertain_pages(self.db, limit)
        except (SQLAlchemyError, OSError) as error:
            raise ApiError(503, f"the database cannot be read: {error}") from error
        return web.json_response(
            {
                "pages": [
                    {
                        "id": page.url_id,
                        "url": page.url,
                        "title": page.title,
                        "relevance": _rounded(page.relevance),
                        "margin": round(page.margin, 4),
                    }
                    for page in found
                ]
            }
        )


def _page_id(request: web.Request) -> int:
    raw = request.match_info["id"]
    if not raw.isascii() or not raw.isdigit() or len(raw) > 18:
        raise bad_request(f"a page's id is a whole number, not {raw!r:.40}")
    return int(raw)


def _page_json(page: PageDetail) -> dict[str, Any]:
    return {
        "id": page.url_id,
        "url": page.url,
        "title": page.title,
        "host": page.host,
        "relevance": _rounded(page.relevance),
        "depth": page.depth,
        "text": page.text,
        "label": page.label,
        "outlinks": [
            {"id": link.url_id, "url": link.url, "visited": link.visited} for link in page.outlinks
        ],
        "more_outlinks": page.more_outlinks,
        "fetch": {
            "status": page.status,
            "content_type": page.content_type,
            "content_length": page.content_length,
            "fetched_at": None if page.fetched_at is None else page.fetched_at.isoformat(),
            "fetch_count": page.fetch_count,
            "final_url": page.final_url,
            "error": page.error,
            "discovered_from": page.discovered_from,
        },
    }


def _rounded(relevance: float | None) -> float | None:
    return None if relevance is None else round(relevance, 4)


def _hosts_at_work(engine: Engine) -> int:
    """Hosts with URLs queued (in memory or in the database only) or under way."""
    frontier = engine.frontier
    hosts = set(frontier.hosts())
    hosts.update(host for host, count in frontier.spilled_hosts.items() if count > 0)
    hosts.update(frontier.busy_hosts())
    return len(hosts)
