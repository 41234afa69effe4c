"""The server process's way to the crawl: the Unix socket on which the crawl's process
serves /metrics, /healthz and the engine's part of the API (`crawler.web.control`).
Requests for those are passed on as they came. The status is answered from the last
one read: it is read again every `STATUS_EVERY` seconds, and after a pause or a resume,
whose answers carry it, so that a busy crawl does not hold up the web page's polls."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import Any

from aiohttp import ClientError, ClientSession, ClientTimeout, UnixConnector, web

from crawler.web.errors import ApiError
from crawler.web.requests import body_bytes, check_query
from crawler.web.routes import PREFIX

log = logging.getLogger(__name__)

STATUS_EVERY = 0.5  # seconds between two reads of the crawl's status
FORWARD_TIMEOUT = 120.0  # seconds a change may take (seeds wait for a database away)
PASSED_ON = ("Authorization", "Content-Type")  # the request headers the crawl reads
ANSWERED = ("Content-Type", "WWW-Authenticate", "Allow")  # and those of its answers


class CrawlLink:
    def __init__(self, socket_path: str) -> None:
        self.socket_path = socket_path
        self._session: ClientSession | None = None
        self._status: dict[str, Any] | None = None
        self._watch: asyncio.Task[None] | None = None

    async def open(self) -> None:
        """Connect, and read the status once: the server answers from its start."""
        self._session = ClientSession(
            connector=UnixConnector(path=self.socket_path),
            timeout=ClientTimeout(total=FORWARD_TIMEOUT),
        )
        await self._read_status()
        self._watch = asyncio.create_task(self._watch_status())

    async def close(self, _app: web.Application | None = None) -> None:
        if self._watch is not None:
            self._watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watch
        if self._session is not None:
            await self._session.close()

    def routes(self) -> list[web.RouteDef]:
        return [
            web.get(f"{PREFIX}/status", self.status),
            web.post(f"{PREFIX}/seeds", self.forward),
            web.post(f"{PREFIX}/pause", self.forward_and_note_status),
            web.post(f"{PREFIX}/resume", self.forward_and_note_status),
            web.get("/metrics", self.forward),
            web.get("/healthz", self.health),
        ]

    async def status(self, request: web.Request) -> web.Response:
        check_query(request, set())
        if self._status is None:
            raise ApiError(503, "the crawl's status cannot be read")
        return web.json_response(self._status)

    async def forward(self, request: web.Request) -> web.Response:
        status, headers, body = await self._ask(request)
        return web.Response(status=status, headers=headers, body=body)

    async def forward_and_note_status(self, request: web.Request) -> web.Response:
        status, headers, body = await self._ask(request)
        if status == 200:
            self._status = json.loads(body)
        return web.Response(status=status, headers=headers, body=body)

    async def health(self, request: web.Request) -> web.Response:
        """The crawl's /healthz, or 503 if the crawl does not answer (a probe's answer)."""
        try:
            return await self.forward(request)
        except ApiError as error:
            return web.json_response({"status": "unreachable", "error": error.message}, status=503)

    async def _ask(self, request: web.Request) -> tuple[int, dict[str, str], bytes]:
        assert self._session is not None
        headers = {name: request.headers[name] for name in PASSED_ON if name in request.headers}
        body = await body_bytes(request)
        try:
            async with self._session.request(
                request.method,
                "http://crawl" + request.path_qs,
                headers=headers,
                data=body,
            ) as answer:
                body = await answer.read()
                kept = {name: answer.headers[name] for name in ANSWERED if name in answer.headers}
                return answer.status, kept, body
        except (TimeoutError, ClientError, OSError) as error:
            said = str(error) or type(error).__name__
            raise ApiError(503, f"the crawl does not answer: {said}") from error

    async def _read_status(self) -> None:
        assert self._session is not None
        async with self._session.get(f"http://crawl{PREFIX}/status") as answer:
            answer.raise_for_status()
            self._status = await answer.json()

    async def _watch_status(self) -> None:
        while True:
            await asyncio.sleep(STATUS_EVERY)
            try:
                await self._read_status()
            except (TimeoutError, ClientError, OSError, ValueError) as error:
                # the crawl is ending, or too busy: the last status stands
                log.debug("the crawl's status cannot be read: %s", error)
