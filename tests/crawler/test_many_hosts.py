"""Polite crawls of many hosts: every host's gap kept, and a host's wait costs no other
host its turn. The hosts are loopback addresses (127.3.0.x), each its own listening
socket, all served by one app that tells them apart by the Host header."""

from __future__ import annotations

import itertools
import socket
import time
from collections import Counter, defaultdict
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

from aiohttp import web

from tests.crawler.helpers import crawl, links

TOLERANCE = 0.02  # seconds: the server reads a request's time after the crawler sends it


@dataclass(frozen=True)
class Answer:
    body: str
    content_type: str = "text/html"
    status: int = 200
    location: str | None = None


@dataclass
class Web:
    """The hosts' roots, and every request as the hosts saw it: (host, path, arrival)."""

    roots: list[str]
    requests: list[tuple[str, str, float]] = field(default_factory=list)

    def host(self, n: int) -> str:
        return self.roots[n][len("http://") : -1]

    def arrivals(self) -> dict[str, list[tuple[str, float]]]:
        """(path, arrival) by host, in order."""
        hosts = defaultdict(list)
        for host, path, arrived in self.requests:
            hosts[host].append((path, arrived))
        return hosts


# host i's answers by path, given every host's root
Site = Callable[[int, list[str]], dict[str, Answer]]


@asynccontextmanager
async def many_hosts(count: int, site: Site) -> AsyncIterator[Web]:
    """`count` hosts, 127.3.0.1 on, host i answering the paths of `site(i, roots)`."""
    sockets = []
    for n in range(count):
        sock = socket.socket()
        sock.bind((f"127.3.0.{n + 1}", 0))
        sockets.append(sock)
    served = Web([f"http://{host}:{port}/" for host, port in (s.getsockname() for s in sockets)])
    answers = {served.host(n): site(n, served.roots) for n in range(count)}

    async def answer(request: web.Request) -> web.StreamResponse:
        served.requests.append((request.host, request.path_qs, time.monotonic()))
        found = answers.get(request.host, {}).get(request.path_qs)
        if found is None:
            raise web.HTTPNotFound()
        headers = {"Location": found.location} if found.location else None
        return web.Response(
            text=found.body, status=found.status, content_type=found.content_type, headers=headers
        )

    app = web.Application()
    app.router.add_route("GET", "/{tail:.*}", answer)
    runner = web.AppRunner(app)
    await runner.setup()
    try:
        for sock in sockets:
            await web.SockSite(runner, sock).start()
        yield served
    finally:
        await runner.cleanup()


def robots(text: str = "User-agent: *\nAllow: /\n") -> Answer:
    return Answer(text, content_type="text/plain")


def asked_twice(served: Web) -> list[tuple[str, str]]:
    asked = Counter((host, path) for host, path, _ in served.requests)
    return [request for request, times in asked.items() if times > 1]


def closer_than(served: Web, delay: float) -> list[tuple[str, float]]:
    """(host, gap) for consecutive requests to one host closer than `delay`."""
    return [
        (host, later - earlier)
        for host, requests in served.arrivals().items()
        for (_, earlier), (_, later) in itertools.pairwise(requests)
        if later - earlier < delay - TOLERANCE
    ]


async def test_a_polite_crawl_of_two_hundred_hosts_asks_every_page_once_keeping_every_gap(
    tmp_path: Path,
) -> None:
    """200 hosts of 6 pages, each root linking to its pages and to three other roots,
    seeded with every root and crawled to the end: every page of every host is asked for
    once, and no host twice within the delay."""
    count, delay, per_host = 200, 0.25, 6
    pages = ["/", *(f"/p{i}" for i in range(per_host))]

    def site(n: int, roots: list[str]) -> dict[str, Answer]:
        others = [roots[(n + step) % count] for step in (1, 7, 31)]
        return {
            "/robots.txt": robots(),
            "/": Answer(links(*pages[1:], *others)),
            **{path: Answer(links("/", words=f"solar energy {path[1:]}")) for path in pages[1:]},
        }

    async with many_hosts(count, site) as served:
        summary = await crawl(
            f"sqlite+aiosqlite:///{tmp_path}/crawl.db", served.roots, delay=delay, duration=120
        )
    assert summary.stop_reason == "frontier exhausted"
    asked = {(host, path) for host, path, _ in served.requests if path != "/robots.txt"}
    assert asked == {(served.host(n), path) for n in range(count) for path in pages}
    assert asked_twice(served) == []
    assert closer_than(served, delay) == []


async def test_a_visit_waiting_for_its_host_holds_no_other_host_back(tmp_path: Path) -> None:
    """One place to fetch (concurrency 1). Host 0 asks for 2 s between requests and its
    root redirects to another of its pages: that visit waits 2 s for its host, and
    meanwhile the other hosts' pages (600, too many for 2 s) are fetched, in the place it
    does not hold."""
    count, crawl_delay = 11, 2.0

    def site(n: int, roots: list[str]) -> dict[str, Answer]:
        if n == 0:
            return {
                "/robots.txt": robots(f"User-agent: *\nCrawl-delay: {crawl_delay:g}\n"),
                "/": Answer("", status=302, location="/moved"),
                "/moved": Answer(links(words="solar energy moved")),
            }
        pages = [f"/p{i}" for i in range(60)]
        return {
            "/robots.txt": robots(),
            "/": Answer(links(*pages)),
            **{path: Answer(links("/", words=f"solar energy {path[1:]}")) for path in pages},
        }

    async with many_hosts(count, site) as served:
        await crawl(
            f"sqlite+aiosqlite:///{tmp_path}/crawl.db",
            served.roots,
            delay=0.1,
            concurrency=1,
            fetchers="fixed",
            duration=60,
            max_pages=count * 61,
        )
    slow = served.host(0)
    asked = dict(served.arrivals()[slow])
    assert asked["/moved"] - asked["/"] >= crawl_delay - TOLERANCE
    meanwhile = [
        path
        for host, path, arrived in served.requests
        if host != slow and asked["/"] < arrived < asked["/moved"]
    ]
    # at 0.1 s a host and ten hosts, the place is free for up to 200 requests; one in
    # five shows it was not held (held, none would be)
    assert len(meanwhile) >= 40
    assert closer_than(served, 0.1) == []
    assert asked_twice(served) == []
