"""Real loopback servers and crawls for the crawler's tests."""

from __future__ import annotations

import asyncio
import itertools
import sqlite3
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestServer
from prometheus_client import CollectorRegistry

import storage
from crawler.config import CrawlConfig
from crawler.engine.engine import CrawlSummary
from crawler.service import run_crawl
from testbed.server import Testbed

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass
class Seen:
    """What a server saw: (path, arrival, response end) per request."""

    requests: list[tuple[str, float, float]] = field(default_factory=list)

    def paths(self) -> list[str]:
        return [path for path, _, _ in self.requests]

    def gaps(self, *, skip_robots: bool = True) -> list[float]:
        """Idle time between one response's end and the next request's arrival."""
        timeline = [r for r in self.requests if not (skip_robots and r[0] == "/robots.txt")]
        return [b[1] - a[2] for a, b in itertools.pairwise(timeline)]


SEEN = web.AppKey("seen", Seen)


def site(routes: dict[str, Handler], *, robots: str | None = "User-agent: *\nAllow: /\n"):
    """An aiohttp app serving `routes`, recording every request in app[SEEN]."""
    seen = Seen()

    @web.middleware
    async def record(request: web.Request, handler: Handler) -> web.StreamResponse:
        arrived = time.monotonic()
        try:
            return await handler(request)
        finally:
            seen.requests.append((request.path, arrived, time.monotonic()))

    app = web.Application(middlewares=[record])
    if robots is not None and "/robots.txt" not in routes:
        routes = {"/robots.txt": text(robots, "text/plain"), **routes}
    for path, handler in routes.items():
        app.router.add_get(path, handler)
    app[SEEN] = seen
    return app


def html(body: str, *, status: int = 200, headers: dict[str, str] | None = None) -> Handler:
    async def handler(_request: web.Request) -> web.Response:
        return web.Response(text=body, status=status, content_type="text/html", headers=headers)

    return handler


def text(body: str, content_type: str, status: int = 200) -> Handler:
    async def handler(_request: web.Request) -> web.Response:
        return web.Response(text=body, status=status, content_type=content_type)

    return handler


def redirect(location: str, status: int = 302) -> Handler:
    async def handler(_request: web.Request) -> web.Response:
        return web.Response(status=status, headers={"Location": location})

    return handler


def links(*hrefs: str, words: str = "solar energy panels") -> str:
    anchors = "".join(f'<a href="{h}">{words}</a>' for h in hrefs)
    return f"<html><head><title>{words}</title></head><body><p>{words}</p>{anchors}</body></html>"


async def serve(app: web.Application, host: str = "127.0.0.1") -> TestServer:
    server = TestServer(app, host=host, port=0)
    await server.start_server()
    return server


@asynccontextmanager
async def serving(app: web.Application, host: str = "127.0.0.1") -> AsyncIterator[str]:
    """Serve `app` for the block; yields its base URL."""
    server = await serve(app, host)
    try:
        yield str(server.make_url("/"))
    finally:
        await server.close()


FAST = {
    "delay": 0.0,
    "metrics_port": 0,
    "allow_private_networks": True,
    "connect_timeout": 2.0,
    "total_timeout": 5.0,
    "robots_retry": 0.3,
    # the tests of sitemaps ask for them (test_sitemaps.py); the others count their
    # requests without a /sitemap.xml a host
    "sitemaps": False,
}


async def crawl(
    db_url: str,
    seeds: list[str],
    *,
    registry: CollectorRegistry | None = None,
    **settings: Any,
) -> CrawlSummary:
    values = {**FAST, **settings}
    config = CrawlConfig(
        seeds=tuple(seeds), topic=values.pop("topic", "solar energy"), db=db_url, **values
    )
    return await run_crawl(config, registry=registry or CollectorRegistry(), handle_signals=False)


async def crawled_site(path: Path, routes: dict[str, Handler], topic: str) -> str:
    """The database file `path`, holding a crawl of a site serving `routes`."""
    async with serving(site(routes)) as base:
        await crawl(str(path), [base], topic=topic)
    return str(path)


async def collection(db_url: str) -> dict[str, storage.ExportRecord]:
    engine = storage.open_engine(db_url)
    try:
        async with engine.connect() as connection:
            return {r.url: r async for r in storage.iter_export(connection)}
    finally:
        await engine.dispose()


async def sources(db_url: str) -> dict[str, storage.SourceRecord]:
    """The crawl's sources, by URL."""
    engine = storage.open_engine(db_url)
    try:
        async with engine.connect() as connection:
            return {s.url: s for s in await storage.load_sources(connection)}
    finally:
        await engine.dispose()


def reachable(bed: Testbed) -> set[int]:
    """The testbed's pages that links lead to from its seed (page 0)."""
    seen, queue = {0}, deque([0])
    while queue:
        for target in bed.web.links_of(queue.popleft()).tolist():
            if target not in seen:
                seen.add(target)
                queue.append(target)
    return seen


def stored(path: Path) -> int:
    """URLs recorded so far in a crawl database another process may be writing."""
    if not path.exists():
        return 0
    with sqlite3.connect(path, timeout=5) as connection:
        try:
            return connection.execute("SELECT count(*) FROM urls WHERE state = 1").fetchone()[0]
        except sqlite3.OperationalError:  # the schema is not there yet
            return 0


class GaugeWatch:
    """The highest value a metric of `registry` reached while the block ran, polled
    every `every` seconds; point `registry` at another to follow a second crawl."""

    def __init__(self, name: str, registry: CollectorRegistry, *, every: float = 0.002) -> None:
        self.name = name
        self.registry = registry
        self.every = every
        self.most = 0
        self._task: asyncio.Task[None] | None = None

    async def _poll(self) -> None:
        while True:
            value = self.registry.get_sample_value(self.name) or 0
            self.most = max(self.most, int(value))
            await asyncio.sleep(self.every)

    async def __aenter__(self) -> GaugeWatch:
        self._task = asyncio.create_task(self._poll())
        return self

    async def __aexit__(self, *_exc: object) -> None:
        assert self._task is not None
        self._task.cancel()
