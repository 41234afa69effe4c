"""The daemon's HTTP server as the crawl starts and stops it: the engine's part (status,
pause, resume, seeds, /metrics, /healthz) on a Unix socket in a directory only this
user reads, and the server process on the daemon's port, which serves the rest and
passes those on (`crawler.web.server_process`)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from prometheus_client import CollectorRegistry

from crawler.config import CrawlConfig
from crawler.engine.engine import Engine
from crawler.net.scope import Scope
from crawler.telemetry.metrics_server import MetricsServer
from crawler.web.control import Control
from crawler.web.server_process import ServerProcess, ServerSettings


class DaemonServer:
    def __init__(
        self,
        config: CrawlConfig,
        registry: CollectorRegistry,
        engine: Engine,
        scope: Scope,
        health: Callable[[], dict[str, object]],
    ) -> None:
        self.config = config
        self.registry = registry
        self.health = health
        self.control = Control(
            engine=engine,
            scope=scope,
            token=config.api_token,
            relevance_threshold=config.relevance_threshold,
        )
        self._directory: str | None = None
        self._internal: MetricsServer | None = None
        self._process: ServerProcess | None = None

    async def start(self) -> None:
        config = self.config
        self._directory = tempfile.mkdtemp(prefix="crawler-")  # mode 0700
        socket_path = str(Path(self._directory) / "crawl.sock")
        try:
            self._internal = MetricsServer(
                self.registry, socket_path=socket_path, health=self.health, app=self.control.app()
            )
            await self._internal.start()
            self._process = ServerProcess(
                ServerSettings(
                    host=config.metrics_host,
                    port=config.metrics_port,
                    socket_path=socket_path,
                    db_url=config.db,
                    token=config.api_token,
                    host_names=config.api_hosts,
                )
            )
            await self._process.start()
        except BaseException:
            await self.stop()
            raise

    async def stop(self) -> None:
        if self._process is not None:
            await self._process.stop()
            self._process = None
        if self._internal is not None:
            await self._internal.stop()
            self._internal = None
        if self._directory is not None:
            shutil.rmtree(self._directory, ignore_errors=True)
            self._directory = None
