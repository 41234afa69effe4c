"""Fetching against real loopback servers: timeouts, sizes, encodings, redirects, errors."""

from __future__ import annotations

import asyncio
import gzip
import zlib

import pytest
from aiohttp import web

from crawler.config import ConfigError
from tests.crawler.helpers import (
    SEEN,
    collection,
    crawl,
    html,
    links,
    redirect,
    serve,
    serving,
    site,
    text,
)


async def test_pages_links_and_outcomes_are_recorded(db_url: str) -> None:
    app = site(
        {
            "/": html(links("/a", "/missing", "/broken", "/doc.pdf")),
            "/a": html(links("/")),
            "/missing": html("gone", status=404),
            "/broken": html("oops", status=500),
            "/doc.pdf": text("%PDF-1.4 <a href='/hidden'>x</a>", "application/pdf"),
        }
    )
    async with serving(app) as base:
        summary = await crawl(db_url, [base])
    pages = await collection(db_url)
    assert summary.stop_reason == "frontier exhausted"
    assert set(pages) == {base, base + "a", base + "missing", base + "broken", base + "doc.pdf"}
    assert (pages[base + "a"].status, pages[base + "a"].error) == (200, None)
    assert pages[base + "a"].discovered_from == base
    assert pages[base + "a"].depth == 1
    assert pages[base + "a"].relevance is not None
    assert pages[base + "a"].relevance > 0.5
    assert pages[base + "a"].title == "solar energy panels"
    assert (pages[base + "missing"].status, pages[base + "missing"].error) == (404, "http_error")
    assert (pages[base + "broken"].status, pages[base + "broken"].error) == (500, "http_error")
    pdf = pages[base + "doc.pdf"]
    assert (pdf.status, pdf.error, pdf.content_type, pdf.relevance) == (
        200,
        None,
        "application/pdf",
        None,
    )
    assert "/hidden" not in app[SEEN].paths()  # not parsed
    assert all(p.fetch_count == 1 for p in pages.values())


async def test_timeouts_and_oversized_bodies_are_recorded_and_the_crawl_goes_on(
    db_url: str,
) -> None:
    async def slow(_request: web.Request) -> web.Response:
        await asyncio.sleep(1.5)
        return web.Response(text="late")

    async def trickle(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/html"})
        await response.prepare(request)
        for _ in range(30):
            await response.write(b"<p>x</p>")
            await asyncio.sleep(0.1)
        return response

    app = site(
        {
            "/": html(links("/slow", "/trickle", "/big", "/ok")),
            "/slow": slow,
            "/trickle": trickle,
            "/big": html("<p>" + "x" * 300_000 + "</p>"),
            "/ok": html(links()),
        }
    )
    async with serving(app) as base:
        await crawl(db_url, [base], total_timeout=0.8, max_body_bytes=100_000, concurrency=4)
    pages = await collection(db_url)
    assert pages[base + "slow"].error == "timeout"
    assert pages[base + "trickle"].error == "timeout"
    assert (pages[base + "big"].status, pages[base + "big"].error) == (200, "too_large")
    assert pages[base + "ok"].error is None


async def test_gzip_and_charsets_from_header_or_meta(db_url: str) -> None:
    async def gzipped(_request: web.Request) -> web.Response:
        body = gzip.compress(links("/latin", "/meta").encode())
        return web.Response(
            body=body, headers={"Content-Type": "text/html", "Content-Encoding": "gzip"}
        )

    async def latin(_request: web.Request) -> web.Response:
        body = "<title>Énergie solaire</title>".encode("latin-1")
        return web.Response(body=body, headers={"Content-Type": "text/html; charset=ISO-8859-1"})

    async def meta(_request: web.Request) -> web.Response:
        body = '<meta charset="windows-1252"><title>Caf\xe9 solaire</title>'.encode("cp1252")
        return web.Response(body=body, headers={"Content-Type": "text/html"})

    async with serving(site({"/": gzipped, "/latin": latin, "/meta": meta})) as base:
        await crawl(db_url, [base])
    pages = await collection(db_url)
    assert pages[base].error is None
    assert pages[base + "latin"].title == "Énergie solaire"
    assert pages[base + "meta"].title == "Café solaire"


async def test_only_the_encodings_the_crawler_decodes_are_offered(db_url: str) -> None:
    """A server that answers brotli to whoever offers it: the crawler offers gzip and
    deflate, whether or not a brotli module is installed, and the pages are stored."""
    offered: list[str] = []

    async def compressed(request: web.Request) -> web.Response:
        accepted = request.headers.get("Accept-Encoding", "")
        offered.append(accepted)
        body = links("/next").encode()
        if "br" in {coding.split(";")[0].strip() for coding in accepted.split(",")}:
            import brotli  # a client offers br only where a brotli module is installed

            encoded, coding = brotli.compress(body), "br"
        else:
            encoded, coding = zlib.compress(body), "deflate"
        return web.Response(
            body=encoded, headers={"Content-Type": "text/html", "Content-Encoding": coding}
        )

    async with serving(site({"/": compressed, "/next": compressed})) as base:
        await crawl(db_url, [base])
    pages = await collection(db_url)
    assert {url: page.error for url, page in pages.items()} == {base: None, base + "next": None}
    assert offered == ["gzip, deflate"] * 2


async def test_a_compression_bomb_is_too_large_in_every_encoding_offered(db_url: str) -> None:
    spaces = b" " * (16 * 1024 * 1024)
    raw_deflate = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    bombs = {
        "/gzip": (gzip.compress(spaces, compresslevel=9), "gzip"),
        "/deflate": (zlib.compress(spaces, 9), "deflate"),
        "/raw-deflate": (raw_deflate.compress(spaces) + raw_deflate.flush(), "deflate"),
    }

    def bomb(body: bytes, coding: str):  # type: ignore[no-untyped-def]
        async def handler(_request: web.Request) -> web.Response:
            headers = {"Content-Type": "text/html", "Content-Encoding": coding}
            return web.Response(body=body, headers=headers)

        return handler

    routes = {path: bomb(*answer) for path, answer in bombs.items()}
    async with serving(site({"/": html(links(*bombs)), **routes})) as base:
        await crawl(db_url, [base], max_body_bytes=1024 * 1024)
    pages = await collection(db_url)
    assert {path: pages[base + path[1:]].error for path in bombs} == dict.fromkeys(
        bombs, "too_large"
    )


async def test_binary_bodies_labelled_html_are_bad_content(db_url: str) -> None:
    async def binary(_request: web.Request) -> web.Response:
        return web.Response(body=b"\x89PNG\x00\x00\x00\x0dIHDR" * 100, content_type="text/html")

    async with serving(site({"/": html(links("/img")), "/img": binary})) as base:
        await crawl(db_url, [base])
    assert (await collection(db_url))[base + "img"].error == "bad_content"


async def test_a_connection_reset_mid_body_is_a_connection_error(db_url: str) -> None:
    async def reset(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(
            headers={"Content-Type": "text/html", "Content-Length": "100000"}
        )
        await response.prepare(request)
        await response.write(b"<html><p>partial")
        assert request.transport is not None
        request.transport.abort()
        return response

    server = await serve(
        site({"/": html(links("/reset", "/ok")), "/reset": reset, "/ok": html(links())})
    )
    try:
        base = str(server.make_url("/"))
        await crawl(db_url, [base])
    finally:
        await server.close()
    pages = await collection(db_url)
    assert pages[base + "reset"].error == "connection_error"
    assert pages[base + "ok"].error is None


async def test_redirects_are_followed_and_checked_hop_by_hop(db_url: str) -> None:
    outside = await serve(site({"/": html(links())}), host="127.0.0.2")
    outside_url = str(outside.make_url("/"))
    app = site(
        {
            "/": html(links("/r1", "/loop1", "/chain0", "/ftp", "/away", "/to-private")),
            "/r1": redirect("/r2", 301),
            "/r2": redirect("/final"),
            "/final": html(links()),
            "/loop1": redirect("/loop2"),
            "/loop2": redirect("/loop1"),
            **{f"/chain{i}": redirect(f"/chain{i + 1}") for i in range(8)},
            "/ftp": redirect("ftp://example.com/file"),
            "/away": redirect(outside_url),
            "/to-private": redirect("/private/x"),
            "/private/x": html("secret"),
        },
        robots="User-agent: *\nDisallow: /private/\n",
    )
    async with serving(app) as base:
        await crawl(db_url, [base], max_redirects=5)
        await outside.close()
    pages = await collection(db_url)
    assert (pages[base + "r1"].final_url, pages[base + "r1"].status) == (base + "final", 200)
    assert pages[base + "r1"].error is None
    assert pages[base + "loop1"].error == "redirect_loop"
    assert pages[base + "chain0"].error == "too_many_redirects"
    assert pages[base + "ftp"].error == "bad_redirect"
    assert (pages[base + "away"].error, pages[base + "away"].final_url) == (
        "out_of_scope",
        outside_url,
    )
    assert (pages[base + "to-private"].error, pages[base + "to-private"].final_url) == (
        "robots",
        base + "private/x",
    )
    assert "/private/x" not in app[SEEN].paths()
    assert outside.app[SEEN].requests == []  # type: ignore[index]
    assert app[SEEN].paths().count("/chain5") == 1
    assert "/chain6" not in app[SEEN].paths()


async def test_private_addresses_are_refused_unless_allowed(db_url: str) -> None:
    other = await serve(site({"/": html(links())}), host="127.0.0.2")
    app = site({"/": html(links("/hop")), "/hop": redirect(str(other.make_url("/")))})
    async with serving(app) as base:
        with pytest.raises(ConfigError, match="resolves to a private or local address"):
            await crawl(db_url, [base], allow_private_networks=False)
        await crawl(
            db_url,
            [base],
            allow_private_networks=False,
            allowed_networks=("127.0.0.1/32",),
            allowed_domains=("127.0.0.1", "127.0.0.2"),
        )
        await other.close()
    pages = await collection(db_url)
    assert pages[base + "hop"].error == "private_network"
    assert other.app[SEEN].requests == []  # type: ignore[index]


async def test_max_depth_stops_following_links(db_url: str) -> None:
    chain = {f"/d{i}": html(links(f"/d{i + 1}")) for i in range(6)}
    async with serving(site({"/": html(links("/d0")), **chain})) as base:
        await crawl(db_url, [base], max_depth=3)
    pages = await collection(db_url)
    assert sorted(p.depth for p in pages.values()) == [0, 1, 2, 3]
    assert base + "d3" not in pages
