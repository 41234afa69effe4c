"""A crawler daemon running on a loopback site, its HTTP API answering, for the tests of
the API, the command line and the web page."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import ClientError, ClientSession, ClientTimeout, web

from testbed.demo import free_port
from tests.crawler.helpers import SEEN, Handler, Seen, crawl, serving, site

TOKEN = "a-token-for-tests-0123456789"
WAIT = 15.0  # seconds a condition of a test may take, at most
POLL = 0.02


def chain(*, latency: float = 0.01, words: str = "wind turbines") -> Handler:
    """/chain/N: a page linking to /chain/N+1, without end: the crawl never runs out."""

    async def handler(request: web.Request) -> web.Response:
        await asyncio.sleep(latency)
        number = int(request.match_info["n"])
        body = (
            f"<html><head><title>{words} {number}</title></head><body><p>{words}</p>"
            f'<a href="/chain/{number + 1}">next</a></body></html>'
        )
        return web.Response(text=body, content_type="text/html")

    return handler


@dataclass
class Daemon:
    api: str  # http://127.0.0.1:PORT, the API's base
    base: str  # the site's base URL, the crawl's seed
    seen: Seen  # what the site was asked
    db_url: str
    client: ClientSession

    async def call(
        self, method: str, path: str, *, token: str | None = TOKEN, **options: Any
    ) -> tuple[int, Any]:
        """The status and JSON body of a request to the API."""
        headers = dict(options.pop("headers", {}))
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        async with self.client.request(
            method, self.api + path, headers=headers, **options
        ) as response:
            return response.status, await response.json()

    async def status(self) -> dict[str, Any]:
        code, body = await self.call("GET", "/api/v1/status")
        assert code == 200, body
        return dict(body)


async def wait_for(check: Callable[[], Awaitable[bool]], what: str) -> None:
    """Poll `check` until it holds, for WAIT seconds at most."""
    deadline = time.monotonic() + WAIT
    while not await check():
        if time.monotonic() > deadline:
            raise AssertionError(f"still not {what} after {WAIT} s")
        await asyncio.sleep(POLL)


@contextlib.asynccontextmanager
async def running_daemon(
    db_url: str, routes: dict[str, Handler], *, token: str | None = TOKEN, **settings: Any
) -> AsyncIterator[Daemon]:
    """A crawl of a site serving `routes`, its API on a free loopback port; cancelled at
    the block's end (a second signal's stop)."""
    port = free_port()
    app = site(routes)
    async with (
        serving(app) as base,
        ClientSession(timeout=ClientTimeout(total=10)) as client,
    ):
        crawling = asyncio.create_task(
            crawl(
                db_url,
                [base],
                metrics_host="127.0.0.1",
                metrics_port=port,
                api_token=token,
                duration=120,
                **settings,
            )
        )
        daemon = Daemon(f"http://127.0.0.1:{port}", base, app[SEEN], db_url, client)

        async def answers() -> bool:
            if crawling.done():
                crawling.result()  # its error, if it failed
                raise AssertionError("the crawl ended before its API answered")
            try:
                async with client.get(daemon.api + "/healthz") as response:
                    return response.status == 200
            except ClientError:
                return False

        try:
            await wait_for(answers, "answering")
            yield daemon
        finally:
            crawling.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await crawling
