"""Serving the synthetic web on loopback: one address per host (127.0.0.1, .2, ...).

Each host serves /robots.txt (disallowing /private/), /p/N (pages; broken ones answer
404 or 500), /r/N (a 301 to page N on its own host) and /loop/a <-> /loop/b (a redirect
loop). With ephemeral sources (`testbed.sources`), source i is /s/i on host
i mod hosts, listing its newest items /s/i/item/N, with an ETag that changes when it
publishes; /_ledger (JSON) says what fetching their items has collected. Every request
is recorded, so tests can measure what the server saw.
"""

from __future__ import annotations

import asyncio
import random
import socket
import time
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web

from testbed.sources import EphemeralSource, EphemeralSources
from testbed.web import TOPIC, TestbedWeb, WebSpec

LOOPBACK_PREFIX = "127.0.0."
HOST_INDEX = web.AppKey("host_index", int)


@dataclass(frozen=True, slots=True)
class ServedRequest:
    host: int
    path: str
    started: float  # time.monotonic() when the request arrived
    finished: float  # when its response was written
    status: int


@dataclass(slots=True)
class ServerSpec:
    port: int = 0  # 0: each host gets a free port
    latency: float = 0.0  # mean seconds (exponential) before a page is served
    crawl_delay: float | None = None  # a Crawl-delay line in every robots.txt
    paragraphs: int = 3  # of text in each page: more cost more to process


class Testbed:
    """`async with Testbed(WebSpec(...)) as bed:` serves the web until the block ends."""

    __test__ = False  # not a pytest class

    def __init__(
        self,
        spec: WebSpec | None = None,
        server: ServerSpec | None = None,
        *,
        sources: list[EphemeralSource] | None = None,
    ) -> None:
        self.web = TestbedWeb(spec or WebSpec())
        self.sources = EphemeralSources(sources or [], seed=self.web.spec.seed)
        self.started = time.monotonic()  # the ephemeral sources' time zero
        self.server = server or ServerSpec()
        self.requests: list[ServedRequest] = []
        self.base_urls: list[str] = []
        self._runners: list[web.AppRunner] = []
        self._rng = random.Random(self.web.spec.seed)

    @property
    def topic(self) -> str:
        return TOPIC

    @property
    def hostnames(self) -> list[str]:
        """The hosts' addresses, for a crawl's allowed domains."""
        return [url.split("//", 1)[1].rsplit(":", 1)[0] for url in self.base_urls]

    @property
    def seeds(self) -> list[str]:
        return [self.page_url(0)] + [self.source_url(i) for i in range(len(self.sources.specs))]

    @property
    def home_urls(self) -> list[str]:
        """Each host's home page: seeds that a crawl kept to its seeds' hosts needs."""
        return [self.page_url(host) for host in range(self.web.spec.hosts)]

    def source_url(self, source: int) -> str:
        return f"{self.base_urls[source % self.web.spec.hosts]}/s/{source}"

    def now(self) -> float:
        """Seconds since the ephemeral sources started."""
        return time.monotonic() - self.started

    def page_url(self, page: int) -> str:
        return f"{self.base_urls[int(self.web.host[page])]}/p/{page}"

    def redirect_url(self, source: int, target: int) -> str:
        return f"{self.base_urls[int(self.web.host[source])]}/r/{target}"

    async def __aenter__(self) -> Testbed:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    async def start(self) -> None:
        self.started = time.monotonic()
        try:
            for host in range(self.web.spec.hosts):
                address = f"{LOOPBACK_PREFIX}{host + 1}"
                sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                sock.bind((address, self.server.port))
                port = sock.getsockname()[1]
                self.base_urls.append(f"http://{address}:{port}")
                runner = web.AppRunner(self._app(host), access_log=None)
                await runner.setup()
                self._runners.append(runner)
                await web.SockSite(runner, sock).start()
        except BaseException:
            await self.stop()
            raise

    async def stop(self) -> None:
        for runner in self._runners:
            await runner.cleanup()
        self._runners.clear()

    def _app(self, host: int) -> web.Application:
        app = web.Application()
        app.router.add_get("/robots.txt", self._robots)
        app.router.add_get("/p/{page:\\d+}", self._page)
        app.router.add_get("/r/{page:\\d+}", self._redirect)
        app.router.add_get("/loop/{name}", self._loop)
        app.router.add_get("/private/{rest:.*}", self._private)
        app.router.add_get("/_ledger", self._ledger)
        app.router.add_get("/s/{source:\\d+}", self._source)
        app.router.add_get("/s/{source:\\d+}/item/{item:\\d+}", self._item)
        app[HOST_INDEX] = host

        @web.middleware
        async def record(request: web.Request, handler):  # type: ignore[no-untyped-def]
            started = time.monotonic()
            status = 500
            try:
                response = await handler(request)
                status = response.status
                return response
            except web.HTTPException as error:
                status = error.status
                raise
            finally:
                self.requests.append(
                    ServedRequest(host, request.path, started, time.monotonic(), status)
                )

        app.middlewares.append(record)
        return app

    async def _robots(self, request: web.Request) -> web.Response:
        lines = ["User-agent: *", "Disallow: /private/"]
        if self.server.crawl_delay is not None:
            lines.append(f"Crawl-delay: {self.server.crawl_delay}")
        return web.Response(text="\n".join(lines) + "\n")

    async def _page(self, request: web.Request) -> web.Response:
        page = int(request.match_info["page"])
        if page >= self.web.spec.pages or int(self.web.host[page]) != request.app[HOST_INDEX]:
            raise web.HTTPNotFound()
        if self.server.latency > 0:
            await asyncio.sleep(self._rng.expovariate(1.0 / self.server.latency))
        status = self.web.status_of(page)
        if status != 200:
            return web.Response(status=status, text="unavailable")
        html = self.web.render(
            page, self.page_url, self.redirect_url, paragraphs=self.server.paragraphs
        )
        return web.Response(text=html, content_type="text/html")

    def _source_of(self, request: web.Request) -> int:
        source = int(request.match_info["source"])
        if (
            source >= len(self.sources.specs)
            or source % self.web.spec.hosts != request.app[HOST_INDEX]
        ):
            raise web.HTTPNotFound()
        return source

    async def _source(self, request: web.Request) -> web.Response:
        source = self._source_of(request)
        items = self.sources.listing(source, self.now())
        etag = f'"{source}-{items[0] + 1 if items else 0}"'
        if request.headers.get("If-None-Match") == etag:
            return web.Response(status=304, headers={"ETag": etag})
        links = "".join(
            f'<li><a href="/s/{source}/item/{item}">'
            f"{' '.join(self.sources.item_words(source, item, 4))}</a></li>"
            for item in items
        )
        html = (
            f"<!doctype html><html><head><title>Source {source}</title></head><body>"
            f"<h1>Latest from source {source}</h1><ul>{links}</ul></body></html>"
        )
        return web.Response(text=html, content_type="text/html", headers={"ETag": etag})

    async def _item(self, request: web.Request) -> web.Response:
        source = self._source_of(request)
        item = int(request.match_info["item"])
        if not self.sources.fetch(source, item, self.now()):
            raise web.HTTPNotFound()
        words = self.sources.item_words(source, item, 120)
        text = " ".join(words[4:])
        html = (
            f"<!doctype html><html><head><title>{' '.join(words[:4])}</title></head>"
            f'<body><p>{text}</p><a href="/s/{source}">more from this source</a></body></html>'
        )
        return web.Response(text=html, content_type="text/html")

    async def _ledger(self, request: web.Request) -> web.Response:
        """What the crawler has collected from the ephemeral sources (JSON)."""
        by_source = [0.0] * len(self.sources.specs)
        for entry in self.sources.ledger:
            by_source[entry.source] += entry.worth
        return web.json_response(
            {
                "seconds": self.now(),
                "items": len(self.sources.ledger),
                "collected": sum(by_source),
                "by_source": by_source,
            }
        )

    async def _redirect(self, request: web.Request) -> web.Response:
        page = int(request.match_info["page"])
        if page >= self.web.spec.pages:
            raise web.HTTPNotFound()
        raise web.HTTPMovedPermanently(self.page_url(page))

    async def _loop(self, request: web.Request) -> web.Response:
        other = "b" if request.match_info["name"] == "a" else "a"
        raise web.HTTPFound(f"/loop/{other}")

    async def _private(self, request: web.Request) -> web.Response:
        return web.Response(text="<html><body>private</body></html>", content_type="text/html")

    def write_ground_truth(self, directory: Path) -> None:
        """pages.tsv, links.tsv, seeds.txt and topic.txt for what is being served. The
        seeds are every host's home page (and the sources), so that a crawl of seeds.txt,
        which stays on its seeds' hosts, reaches every host."""
        directory.mkdir(parents=True, exist_ok=True)
        web_ = self.web
        with (directory / "pages.tsv").open("w") as pages:
            pages.write("url\trelevance\n")
            for page in range(web_.spec.pages):
                pages.write(f"{self.page_url(page)}\t{float(web_.relevance[page]):.4f}\n")
        with (directory / "links.tsv").open("w") as links:
            links.write("src\tdst\n")
            for page in range(web_.spec.pages):
                source = self.page_url(page)
                for target in web_.links_of(page).tolist():
                    links.write(f"{source}\t{self.page_url(target)}\n")
        sources = [self.source_url(i) for i in range(len(self.sources.specs))]
        (directory / "seeds.txt").write_text("\n".join(self.home_urls + sources) + "\n")
        (directory / "topic.txt").write_text(self.topic + "\n")
