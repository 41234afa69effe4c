"""The small HTTP server for /metrics (Prometheus text format) and /healthz (JSON: 200
with status ok, 503 with what is wrong), beside the routes of the application it is
given (the daemon's API and web page, `crawler.web`)."""

from __future__ import annotations

import json
from collections.abc import Callable

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest


class MetricsServer:
    def __init__(
        self,
        registry: CollectorRegistry,
        *,
        host: str,
        port: int,
        health: Callable[[], dict[str, object]] = lambda: {"status": "ok"},
        app: web.Application | None = None,
    ) -> None:
        self.registry = registry
        self.host = host
        self.port = port
        self.health = health
        self.app = app if app is not None else web.Application()
        self._runner: web.AppRunner | None = None

    async def start(self) -> None:
        app = self.app
        app.router.add_get("/metrics", self._metrics)
        app.router.add_get("/healthz", self._healthz)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        try:
            await site.start()
        except OSError as error:
            await self._runner.cleanup()
            self._runner = None
            raise OSError(
                error.errno,
                f"cannot serve metrics on {self.host}:{self.port}: {error.strerror} "
                "(choose another --metrics-port, or 0 to disable)",
            ) from error

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/metrics"

    async def _metrics(self, _request: web.Request) -> web.Response:
        body = generate_latest(self.registry)
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})

    async def _healthz(self, _request: web.Request) -> web.Response:
        answer = self.health()
        # anything but ok (the database away: "degraded") is a failed check to a prober
        status = 200 if answer.get("status") == "ok" else 503
        return web.Response(text=json.dumps(answer), status=status, content_type="application/json")
