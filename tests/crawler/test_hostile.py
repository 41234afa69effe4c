"""Servers that misbehave on purpose: every URL gets an outcome with a reason, the crawl
goes on, and no single server holds it."""

from __future__ import annotations

import asyncio
import gzip
import itertools

import pytest
from aiohttp import ClientConnectorError, ClientSession, ClientTimeout, web

from testbed.demo import free_port
from tests.crawler.helpers import SEEN, collection, crawl, html, links, serving, site, text

TIMEOUT = 1.0  # the crawl's total timeout per request, in seconds
BODY_LIMIT = 4 * 1024 * 1024  # a page of 100,000 links (3.3 MB) fits


async def slow_headers(_request: web.Request) -> web.Response:
    await asyncio.sleep(30)
    return web.Response(text="late")


async def slow_body(request: web.Request) -> web.StreamResponse:
    response = web.StreamResponse(headers={"Content-Type": "text/html"})
    await response.prepare(request)
    for _ in range(60):  # a byte every half second
        await response.write(b"<")
        await asyncio.sleep(0.5)
    return response


async def hang(_request: web.Request) -> web.Response:
    await asyncio.Event().wait()
    raise AssertionError("unreachable")


async def truncated(request: web.Request) -> web.StreamResponse:
    response = web.StreamResponse(headers={"Content-Type": "text/html", "Content-Length": "5000"})
    await response.prepare(request)
    await response.write(b"<html><body>cut short")
    assert request.transport is not None
    request.transport.close()
    return response


async def endless(request: web.Request) -> web.StreamResponse:
    response = web.StreamResponse(headers={"Content-Type": "text/html"})
    response.enable_chunked_encoding()
    await response.prepare(request)
    chunk = b"<p>" + b"solar " * 10_000 + b"</p>"
    for _ in range(10_000):  # bounded, for the test's sake: about 600 MB
        await response.write(chunk)
    return response


BOMB = gzip.compress(b" " * (64 * 1024 * 1024), compresslevel=9)  # 64 KB -> 64 MB


async def gzip_bomb(_request: web.Request) -> web.Response:
    return web.Response(
        body=BOMB, headers={"Content-Type": "text/html", "Content-Encoding": "gzip"}
    )


async def mixed_encoding(_request: web.Request) -> web.Response:
    body = (
        b"<html><head><title>caf\xc3\xa9 \xe9t\xe9</title></head><body>solar \xff\xfe</body></html>"
    )
    return web.Response(body=body, headers={"Content-Type": "text/html; charset=utf-8"})


def redirect_to(location: str):  # type: ignore[no-untyped-def]
    async def handler(_request: web.Request) -> web.Response:
        return web.Response(status=302, headers={"Location": location})

    return handler


QUOTED = "/search?q=%27%3B+DROP+TABLE+urls%3B--&x='; DROP TABLE urls;--"
HOSTILE = {
    "/slow-headers": slow_headers,
    "/slow-body": slow_body,
    "/hang": hang,
    "/truncated": truncated,
    "/endless": endless,
    "/gzip-bomb": gzip_bomb,
    "/mixed-encoding": mixed_encoding,
    "/to-ftp": redirect_to("ftp://example.org/file"),
    "/to-file": redirect_to("file:///etc/passwd"),
    "/to-data": redirect_to("data:text/html,<p>hi</p>"),
    "/to-javascript": redirect_to("javascript:alert(1)"),
    "/to-metadata": redirect_to("http://169.254.169.254/latest/meta-data/"),
}
EXPECTED = {
    "/slow-headers": "timeout",
    "/slow-body": "timeout",
    "/hang": "timeout",
    "/truncated": "connection_error",
    "/endless": "too_large",
    "/gzip-bomb": "too_large",
    "/mixed-encoding": None,
    "/to-ftp": "bad_redirect",
    "/to-file": "bad_redirect",
    "/to-data": "bad_redirect",
    "/to-javascript": "bad_redirect",
    "/to-metadata": "private_network",
}


async def test_misbehaving_servers_get_a_reason_each_and_the_crawl_goes_on(db_url: str) -> None:
    many = "".join(f'<a href="/p/{i}">solar {i}</a>' for i in range(100_000))
    long_url = "/x" * 50_000  # a 100 KB URL
    routes = {
        "/": html(links(*HOSTILE, "/many-links", "/long-url", QUOTED)),
        **HOSTILE,
        "/many-links": html(f"<html><body>{many}</body></html>"),
        "/long-url": html(links(long_url, "/fine")),
        "/fine": html(links()),
    }
    app = site(routes)
    async with serving(app) as base:
        summary = await crawl(
            db_url,
            [base],
            allow_private_networks=False,
            allowed_networks=("127.0.0.0/8",),
            # in scope, so the network guard is what refuses the metadata address
            allowed_domains=("127.0.0.1", "169.254.169.254"),
            total_timeout=TIMEOUT,
            max_body_bytes=BODY_LIMIT,
            max_depth=2,  # the links of /many-links are fetched (404)
            duration=60,
        )
        # a request is logged when its handler ends: by answering, or when the client
        # hangs up and aiohttp cancels it
        ended = {path: end - arrival for path, arrival, end in app[SEEN].requests}
    pages = await collection(db_url)
    for path, error in EXPECTED.items():
        assert pages[base.rstrip("/") + path].error == error, path
    # no server held the crawl: it ran out of URLs, not of time, and it hung up on the
    # servers that answer in 30 s, or never, before they had answered
    assert summary.stop_reason == "frontier exhausted"
    for path in ("/slow-headers", "/slow-body", "/hang"):
        assert ended[path] < 30, path
    many_links = pages[base.rstrip("/") + "/many-links"]
    assert many_links.error is None
    # a page's links are capped: its first 5,000, each fetched (depth 2)
    kept = {url.removeprefix(base.rstrip("/")) for url in pages if "/p/" in url}
    assert kept == {f"/p/{i}" for i in range(5_000)}
    assert all(len(url) <= 2048 for url in pages)
    assert base.rstrip("/") + "/fine" in pages  # the page with the huge link was read
    # quotes and SQL in a URL are data: stored as canonicalised, no harm done
    assert any("x=%27;%20DROP%20TABLE%20urls;--" in url for url in pages)


async def test_crawler_traps_end(db_url: str) -> None:
    counter = iter(range(1_000_000))

    async def deeper(request: web.Request) -> web.Response:
        # relative links on a server that answers every path: /a/, /a/a/, /a/a/a/, ...
        return web.Response(text=links("a/", "b/a/"), content_type="text/html")

    async def session(request: web.Request) -> web.Response:
        fresh = next(counter)
        return web.Response(
            text=links(f"/shop?sid={fresh}&item=1", f"/shop;jsessionid={fresh}"),
            content_type="text/html",
        )

    async def calendar(request: web.Request) -> web.Response:
        month = int(request.query.get("m", "0")) + 1
        return web.Response(text=links(f"/cal?m={month}"), content_type="text/html")

    app = site({"/": html(links("/a/", "/shop", "/cal")), "/cal": calendar, "/shop": session})
    app.router.add_get("/{path:a/.*}", deeper)
    app.router.add_get("/{path:b/.*}", deeper)
    async with serving(app) as base:
        summary = await crawl(db_url, [base], max_depth=25, duration=60)
    pages = await collection(db_url)
    assert summary.stop_reason == "frontier exhausted"
    paths = [url.split("/", 3)[3] for url in pages]
    # a segment seen a third time marks a trap: /a/a/ and /a/b/a/ are the deepest
    assert max(path.count("a/") for path in paths if path.startswith(("a/", "b/"))) <= 2
    assert sum(1 for p in paths if p.startswith(("a/", "b/"))) < 20
    # session ids are not part of a page's address: /shop is one page
    assert sorted(p for p in paths if p.startswith("shop")) == ["shop", "shop?item=1"]
    # an endless calendar ends at the maximum depth
    assert sum(1 for p in paths if p.startswith("cal")) == 25


async def test_hostile_robots_txt(db_url: str) -> None:
    async def redirect_loop(_request: web.Request) -> web.Response:
        return web.Response(status=302, headers={"Location": "/robots.txt?again"})

    async def slow(_request: web.Request) -> web.Response:
        await asyncio.sleep(30)
        return web.Response(text="User-agent: *\nDisallow:\n")

    huge = "User-agent: *\nDisallow: /secret\n" + "# filler\n" * 2_000_000  # 18 MB
    cases = {
        "huge": (text(huge, "text/plain"), {"/open": None, "/secret": "robots"}),
        "binary": (bytes_handler(bytes(range(256)) * 4096), {"/open": None, "/secret": None}),
        # RFC 9309: a robots.txt not reached in five redirects is "unavailable": allow all
        "loop": (redirect_loop, {"/open": None, "/secret": None}),
        # no answer in time: "unreachable", nothing is fetched; tried again, then given up
        "slow": (slow, {"/": "deferred"}),
    }
    for name, (robots, expected) in cases.items():
        url = db_url.replace("crawl.db", f"{name}.db")
        routes = {
            "/robots.txt": robots,
            "/": html(links("/open", "/secret")),
            "/open": html(links()),
            "/secret": html(links()),
        }
        app = site(routes, robots=None)
        async with serving(app) as base:
            summary = await crawl(
                url, [base], total_timeout=TIMEOUT, robots_retry=0.2, max_retries=2, duration=30
            )
            ended = [end - arrival for _, arrival, end in app[SEEN].requests]
        pages = await collection(url)
        assert summary.stop_reason == "frontier exhausted", name
        if name == "slow":  # asked again, and each time hung up on before the answer
            assert len(ended) == 3
            assert max(ended) < 30
        found = {url.removeprefix(base.rstrip("/")): page.error for url, page in pages.items()}
        assert {path: found.get(path, "missing") for path in expected} == expected, name
        if name == "slow":
            assert len(found) == 1  # nothing behind the seed was learned


def bytes_handler(body: bytes):  # type: ignore[no-untyped-def]
    async def handler(_request: web.Request) -> web.Response:
        return web.Response(body=body, content_type="text/plain")

    return handler


async def test_every_request_carries_the_user_agent_and_its_contact(db_url: str) -> None:
    agents: list[str] = []

    @web.middleware
    async def record(request: web.Request, handler):  # type: ignore[no-untyped-def]
        agents.append(request.headers.get("User-Agent", ""))
        return await handler(request)

    app = site({"/": html(links("/a", "/b")), "/a": html(links()), "/b": html(links())})
    app.middlewares.append(record)
    agent = "examplebot/1.0 (+https://example.org/about-our-crawler)"
    async with serving(app) as base:
        await crawl(db_url, [base], user_agent=agent)
    assert len(agents) == 4  # robots.txt and three pages
    assert set(agents) == {agent}


@pytest.mark.parametrize(
    ("status", "retry_after"),
    [
        (429, "1"),
        # the others take their five seconds each in CI's slow run
        pytest.param(429, None, marks=pytest.mark.slow),
        pytest.param(503, None, marks=pytest.mark.slow),
        pytest.param(503, "1", marks=pytest.mark.slow),
    ],
)
async def test_a_throttling_storm_slows_the_crawler_down(
    db_url: str, status: int, retry_after: str | None
) -> None:
    headers = {} if retry_after is None else {"Retry-After": retry_after}
    storm = html(links(), status=status, headers=headers)
    pages = {f"/p{i}": storm for i in range(30)}
    app = site({"/": html(links(*pages)), **pages})
    async with serving(app) as base:
        await crawl(db_url, [base], duration=5.0, max_retries=3)
    seen = [r for r in app[SEEN].requests if r[0].startswith("/p")]
    # with no delay set, an unthrottled crawler would send hundreds in 5 s
    assert 2 <= len(seen) <= 7
    gaps = [b[1] - a[2] for a, b in itertools.pairwise(seen)]
    assert min(gaps) >= 0.9  # a second at least between requests to the struggling host


@pytest.mark.parametrize("processors", [1, 2])
async def test_a_page_of_nested_tags_is_stored_and_the_crawl_goes_on(
    db_url: str, processors: int
) -> None:
    """2 MB of lists left open, each nested in the one before, would cost the parser a
    minute: on the event loop (one processor) it would stop the health check answering,
    in a worker every later page would wait behind it. Nesting is capped as browsers cap
    it, so the page is read in well under a second and stored with its text."""
    nested = "<ul><li><a href='/p/0'>solar</a>" * 80_000
    pages = {f"/p/{i}": html(links(f"/p/{(i + 1) % 30}")) for i in range(30)}
    routes = {"/": html(links("/nested", "/p/0")), "/nested": html(nested), **pages}
    port = free_port()
    health: list[int] = []

    async def poll_health(session: ClientSession) -> None:
        while True:
            try:
                async with session.get(
                    f"http://127.0.0.1:{port}/healthz", timeout=ClientTimeout(total=1)
                ) as response:
                    health.append(response.status)
            except ClientConnectorError:  # not listening yet
                pass
            except TimeoutError:
                health.append(0)
            await asyncio.sleep(0.05)

    async with serving(site(routes)) as base, ClientSession() as session:
        polling = asyncio.create_task(poll_health(session))
        try:
            summary = await crawl(
                db_url, [base], processors=processors, metrics_port=port, duration=30
            )
        finally:
            polling.cancel()
    stored = await collection(db_url)
    assert summary.stop_reason == "frontier exhausted"
    page = stored[base.rstrip("/") + "/nested"]
    assert page.error is None
    assert len(stored) == 2 + len(pages)
    assert all(record.error is None for record in stored.values())
    assert health
    assert set(health) == {200}  # every poll answered in time
