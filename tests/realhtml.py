"""A small site of the real web for the tests, and its ground truth: Sphinx's own
documentation (Debian's sphinx-doc, 134 pages; tests/data/realhtml/README.md), served on
loopback as nginx serves it, with each page's relevance to a topic known.

    from tests.crawler.helpers import collection, crawl
    from tests.realhtml import real_site

    async def test_best_first_finds_the_docstring_pages_early(db_url: str) -> None:
        async with real_site("docstrings") as site:
            await crawl(db_url, site.seeds, topic=site.topic,
                        allowed_domains=tuple(site.hostnames), max_pages=40)
        stored = await collection(db_url)
        assert len(site.relevant & set(stored)) >= ...
        assert site.requests["/usage/extensions/napoleon.html"] <= 1

The topics are TOPICS. `site.truth` is each page's relevance by its URL as the crawler
stores it (canonical, on the address the site is served at), `site.relevant` the pages
at or above `site.threshold`, `site.links` each page's links to other pages of the site
(the graph the ground truth was walked on), and `site.requests` counts every request
the server answered, by its percent-decoded path (robots.txt, 404s and redirects
included).

The archive's pages are read into memory once per process; the server answers as nginx
does from a directory of them: a path ending in "/" is its index.html, a directory's
path without the slash redirects (301) to it, a path is percent-decoded before it is
looked up and its query ignored, anything else is 404; pages are text/html.
"""

from __future__ import annotations

import functools
import tarfile
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from aiohttp import web
from aiohttp.test_utils import TestServer
from yarl import URL

from crawler.reporting.history import read_ground_truth

DATA = Path(__file__).resolve().parent / "data" / "realhtml"
ARCHIVE = DATA / "sphinx-doc.tar.xz"
LICENCE = DATA / "COPYRIGHT-sphinx-doc"
TRUTH = DATA / "truth"  # one ground-truth directory a topic, on the placeholder base
PLACEHOLDER = "http://realhtml.test/"  # the base bench/realweb/make_fixture.py wrote
THRESHOLD = 0.1  # make_fixture.py's: a page this relevant or more counts as relevant
TOPICS = ("extension-api", "docstrings")  # topic.txt: "sphinx extension api", ...
ROBOTS = "User-agent: *\nAllow: /\n"


@dataclass(frozen=True)
class RealSite:
    """The site as served, and one topic's ground truth on it."""

    base: str  # "http://127.0.0.1:PORT/"
    topic_name: str  # one of TOPICS
    topic: str  # the topic's text, as a crawl takes it
    seeds: list[str]
    truth: dict[str, float]  # page URL -> relevance (a cosine, 0 to 1)
    links: dict[str, list[str]]  # page URL -> the site's pages it links to (every page)
    threshold: float = THRESHOLD
    requests: Counter[str] = field(default_factory=Counter)  # path -> requests answered

    @property
    def hostnames(self) -> list[str]:
        return [URL(self.base).host or ""]

    @property
    def relevant(self) -> set[str]:
        return {url for url, relevance in self.truth.items() if relevance >= self.threshold}

    def url(self, path: str) -> str:
        """The URL of a path on the site: url("/usage/index.html")."""
        return self.base + path.removeprefix("/")


@functools.cache
def site_files() -> dict[str, bytes]:
    """The archive's files by their paths under the site's root, read once."""
    with tarfile.open(ARCHIVE) as archive:
        found = {}
        for member in archive.getmembers():
            body = archive.extractfile(member) if member.isfile() else None
            if body is not None:
                found[member.name] = body.read()
    return found


@functools.cache
def directories() -> frozenset[str]:
    return frozenset(
        str(parent)
        for name in site_files()
        for parent in PurePosixPath(name).parents
        if parent.parts
    )


@functools.cache
def ground_truth(topic_name: str) -> tuple[str, list[str], dict[str, float], dict[str, list[str]]]:
    """A topic's text, seeds, relevance by URL and links, on the placeholder base."""
    if topic_name not in TOPICS:
        raise ValueError(f"{topic_name!r}: not one of {', '.join(TOPICS)}")
    directory = TRUTH / topic_name
    links: dict[str, list[str]] = {}
    with (directory / "links.tsv").open(encoding="utf-8") as rows:
        next(rows)
        for row in rows:
            source, target = row.rstrip("\n").split("\t")
            links.setdefault(source, []).append(target)
    return (
        (directory / "topic.txt").read_text(encoding="utf-8").strip(),
        (directory / "seeds.txt").read_text(encoding="utf-8").split(),
        read_ground_truth(directory),
        links,
    )


def _on(base: str, url: str) -> str:
    if not url.startswith(PLACEHOLDER):
        raise ValueError(f"{url}: not on {PLACEHOLDER}")
    return base + url.removeprefix(PLACEHOLDER)


def app(requests: Counter[str]) -> web.Application:
    """The site as nginx serves its directory, counting requests by path."""
    files, folders = site_files(), directories()

    async def serve(request: web.Request) -> web.StreamResponse:
        path = request.path  # percent-decoded, dot segments resolved
        requests[path] += 1
        if path == "/robots.txt":
            return web.Response(text=ROBOTS, content_type="text/plain")
        name = path.lstrip("/")
        if path.endswith("/"):
            name += "index.html"
        body = files.get(name)
        if body is not None:
            return web.Response(body=body, content_type="text/html")
        if name in folders:
            raise web.HTTPMovedPermanently(request.rel_url.raw_path + "/")
        raise web.HTTPNotFound()

    application = web.Application()
    application.router.add_get("/{path:.*}", serve)
    return application


@asynccontextmanager
async def real_site(topic_name: str, *, host: str = "127.0.0.1") -> AsyncIterator[RealSite]:
    """Serve the site on `host` (a free port) for the block, with `topic_name`'s truth."""
    topic, seeds, truth, links = ground_truth(topic_name)
    requests: Counter[str] = Counter()
    server = TestServer(app(requests), host=host, port=0)
    await server.start_server()
    try:
        base = str(server.make_url("/"))
        yield RealSite(
            base=base,
            topic_name=topic_name,
            topic=topic,
            seeds=[_on(base, url) for url in seeds],
            truth={_on(base, url): relevance for url, relevance in truth.items()},
            links={
                _on(base, url): [_on(base, target) for target in links.get(url, [])]
                for url in truth
            },
            requests=requests,
        )
    finally:
        await server.close()
