"""The small HTTP server for /metrics (Prometheus text format) and /healthz (JSON: 200
with status ok, 503 with what is wrong), beside the routes of the application it is
given (the engine's part of the daemon's API, `crawler.web.control`), on a TCP port or
on a Unix socket (where the daemon's server process reaches it). It serves from an
event loop on a thread of its own, so that a crawl's busy loop does not hold its
answers up: its handlers read the crawl's state only through what is safe across
threads (the registry's locked values, counters read whole) or on the crawl's loop."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Coroutine
from typing import Any

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest


def cannot_serve(where: str, why: str) -> str:
    """The error said when a server cannot take its address."""
    return (
        f"cannot serve metrics on {where}: {why} (choose another --metrics-port, or 0 to disable)"
    )


class MetricsServer:
    def __init__(
        self,
        registry: CollectorRegistry,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        socket_path: str | None = None,
        health: Callable[[], dict[str, object]] = lambda: {"status": "ok"},
        app: web.Application | None = None,
    ) -> None:
        self.registry = registry
        self.host = host
        self.port = port
        self.socket_path = socket_path
        self.health = health
        self.app = app if app is not None else web.Application()
        self._runner: web.AppRunner | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    async def start(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="metrics-server", daemon=True
        )
        self._thread.start()
        try:
            await self._on_thread(self._serve())
        except BaseException:
            await self._end_thread()
            raise

    async def stop(self) -> None:
        if self._thread is not None:
            await self._on_thread(self._cleanup())
            await self._end_thread()

    async def _serve(self) -> None:
        app = self.app
        app.router.add_get("/metrics", self._metrics)
        app.router.add_get("/healthz", self._healthz)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site: web.BaseSite
        if self.socket_path is not None:
            site = web.UnixSite(self._runner, self.socket_path)
        else:
            site = web.TCPSite(self._runner, self.host, self.port)
        try:
            await site.start()
        except OSError as error:
            await self._cleanup()
            where = self.socket_path or f"{self.host}:{self.port}"
            raise OSError(error.errno, cannot_serve(where, str(error.strerror))) from error

    async def _cleanup(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _on_thread(self, work: Coroutine[Any, Any, None]) -> None:
        assert self._loop is not None
        await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(work, self._loop))

    async def _end_thread(self) -> None:
        assert self._loop is not None
        assert self._thread is not None
        self._loop.call_soon_threadsafe(self._loop.stop)
        await asyncio.to_thread(self._thread.join)
        self._loop.close()
        self._loop, self._thread = None, None

    @property
    def url(self) -> str:
        where = (
            f"unix:{self.socket_path}:" if self.socket_path else f"http://{self.host}:{self.port}"
        )
        return f"{where}/metrics"

    async def _metrics(self, _request: web.Request) -> web.Response:
        body = generate_latest(self.registry)
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})

    async def _healthz(self, _request: web.Request) -> web.Response:
        answer = self.health()
        # anything but ok (the database away: "degraded") is a failed check to a prober
        status = 200 if answer.get("status") == "ok" else 503
        return web.Response(text=json.dumps(answer), status=status, content_type="application/json")
