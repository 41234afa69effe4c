"""Sitemaps as a discovery source, on loopback sites that have them: requests counted at
the servers."""

from __future__ import annotations

import gzip
import logging
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest
from aiohttp import web
from prometheus_client import CollectorRegistry

from crawler.config import CrawlConfig
from crawler.fetch.sitemaps import HostSitemaps
from tests.crawler.helpers import (
    SEEN,
    Handler,
    collection,
    crawl,
    html,
    links,
    serving,
    site,
)

PAGE = html(links(words="solar energy panels"))


def urlset(*paths: str) -> Callable[[str], str]:
    """A sitemap of `paths` on the host it is asked of."""
    return lambda origin: _document("urlset", "url", [origin + path for path in paths])


def index(*paths: str) -> Callable[[str], str]:
    return lambda origin: _document("sitemapindex", "sitemap", [origin + path for path in paths])


def _document(root: str, item: str, locs: list[str]) -> str:
    entries = "".join(
        f"<{item}><loc>{loc}</loc><lastmod>2024-05-01</lastmod></{item}>" for loc in locs
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<{root} xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{entries}</{root}>'
    )


def xml(make: Callable[[str], str], *, packed: str | None = None) -> Handler:
    """A sitemap made for the host asked; `packed`: "file" (a .xml.gz) or "encoding"
    (Content-Encoding: gzip)."""

    async def handler(request: web.Request) -> web.Response:
        body = make(str(request.url.origin())).encode()
        if packed is None:
            return web.Response(body=body, content_type="application/xml")
        body = gzip.compress(body)
        if packed == "file":
            return web.Response(body=body, content_type="application/gzip")
        return web.Response(
            body=body, content_type="application/xml", headers={"Content-Encoding": "gzip"}
        )

    return handler


def robots_naming(*paths: str, rules: str = "Allow: /") -> Handler:
    """A robots.txt with a Sitemap line for each of `paths` on its own host."""

    async def handler(request: web.Request) -> web.Response:
        origin = str(request.url.origin())
        lines = "".join(f"Sitemap: {origin}{path}\n" for path in paths)
        return web.Response(text=f"User-agent: *\n{rules}\n{lines}", content_type="text/plain")

    return handler


def test_sitemaps_are_read_by_default() -> None:
    config = CrawlConfig(seeds=("http://example.org/",), topic="solar energy")
    assert config.sitemaps
    assert config.sitemap_max_urls == 50_000


def sitemaps_read(registry: CollectorRegistry, result: str) -> float:
    return registry.get_sample_value("crawler_sitemaps_total", {"result": result}) or 0.0


async def test_urls_only_a_sitemap_lists_are_fetched_once_and_the_sitemap_is_no_page(
    db_url: str,
) -> None:
    app = site(
        {
            "/robots.txt": robots_naming("/maps/pages.xml"),
            "/": PAGE,
            "/hidden/a": PAGE,
            "/hidden/b": PAGE,
            "/maps/pages.xml": xml(urlset("/hidden/a", "/hidden/b", "/")),
        }
    )
    registry = CollectorRegistry()
    async with serving(app) as base:
        summary = await crawl(db_url, [base], sitemaps=True, registry=registry)
    paths = app[SEEN].paths()
    assert paths.count("/hidden/a") == paths.count("/hidden/b") == 1
    assert paths.count("/maps/pages.xml") == 1
    assert "/sitemap.xml" not in paths  # robots.txt named the host's sitemaps
    pages = await collection(db_url)
    assert set(pages) == {base, base + "hidden/a", base + "hidden/b"}
    assert summary.fetched == 3  # the sitemap is not counted as a page
    assert sitemaps_read(registry, "read") == 1
    assert registry.get_sample_value("crawler_sitemap_urls_total") == 2


@pytest.mark.parametrize("packed", ["file", "encoding"])
async def test_sitemap_xml_is_asked_when_robots_txt_names_none_and_its_index_is_followed(
    db_url: str, packed: str
) -> None:
    app = site(
        {
            "/": PAGE,
            "/from-a": PAGE,
            "/from-b": PAGE,
            "/sitemap.xml": xml(index("/maps/a.xml.gz", "/maps/b.xml")),
            "/maps/a.xml.gz": xml(urlset("/from-a"), packed=packed),
            "/maps/b.xml": xml(urlset("/from-b"), packed=packed),
        }
    )
    async with serving(app) as base:
        await crawl(db_url, [base], sitemaps=True)
    paths = app[SEEN].paths()
    for path in ("/sitemap.xml", "/maps/a.xml.gz", "/maps/b.xml", "/from-a", "/from-b"):
        assert paths.count(path) == 1, path


async def test_a_sitemap_robots_txt_disallows_is_never_asked_for(db_url: str) -> None:
    app = site(
        {
            "/robots.txt": robots_naming("/maps/closed.xml", "/open.xml", rules="Disallow: /maps/"),
            "/": PAGE,
            "/only-in-closed": PAGE,
            "/only-in-open": PAGE,
            "/maps/closed.xml": xml(urlset("/only-in-closed")),
            "/open.xml": xml(urlset("/only-in-open")),
        }
    )
    async with serving(app) as base:
        await crawl(db_url, [base], sitemaps=True)
    paths = app[SEEN].paths()
    assert "/maps/closed.xml" not in paths
    assert "/only-in-closed" not in paths
    assert paths.count("/only-in-open") == 1


def failing_first(status: int, then: Handler) -> Handler:
    """`status` the first time, then as `then` answers."""
    asked = [0]

    async def handler(request: web.Request) -> web.StreamResponse:
        asked[0] += 1
        if asked[0] == 1:
            return web.Response(status=status, text="not now")
        return await then(request)

    return handler


@pytest.mark.parametrize("status", [429, 500, 503])
async def test_a_sitemap_that_fails_in_passing_is_asked_again_once_and_read(
    db_url: str, status: int
) -> None:
    app = site(
        {
            "/robots.txt": robots_naming("/map.xml"),
            "/": PAGE,
            "/listed": PAGE,
            "/map.xml": failing_first(status, xml(urlset("/listed"))),
        }
    )
    async with serving(app) as base:
        await crawl(db_url, [base], sitemaps=True)
    paths = app[SEEN].paths()
    assert paths.count("/map.xml") == 2
    assert paths.count("/listed") == 1


async def test_a_sitemap_whose_answer_was_cut_short_is_asked_again(db_url: str) -> None:
    then = xml(urlset("/listed"))
    asked = [0]

    async def cut_first(request: web.Request) -> web.StreamResponse:
        asked[0] += 1
        if asked[0] > 1:
            return await then(request)
        response = web.StreamResponse(headers={"Content-Length": "5000"})
        await response.prepare(request)
        await response.write(b"<?xml version='1.0'?><urlset")
        assert request.transport is not None
        request.transport.close()  # a connection error, 5,000 bytes promised
        return response

    app = site(
        {
            "/robots.txt": robots_naming("/map.xml"),
            "/": PAGE,
            "/listed": PAGE,
            "/map.xml": cut_first,
        }
    )
    async with serving(app) as base:
        await crawl(db_url, [base], sitemaps=True)
    paths = app[SEEN].paths()
    assert paths.count("/map.xml") == 2
    assert paths.count("/listed") == 1


@pytest.mark.parametrize(("status", "asked"), [(503, 2), (404, 1), (410, 1)])
async def test_a_sitemap_that_keeps_failing_is_asked_at_most_twice(
    db_url: str, status: int, asked: int
) -> None:
    async def failing(_request: web.Request) -> web.Response:
        return web.Response(status=status, text="no")

    app = site({"/robots.txt": robots_naming("/map.xml"), "/": PAGE, "/map.xml": failing})
    async with serving(app) as base:
        await crawl(db_url, [base], sitemaps=True)
    assert app[SEEN].paths().count("/map.xml") == asked


def test_a_plan_saved_before_sitemaps_were_tried_again_reads_back() -> None:
    older = '{"todo": [["http://a.test/map.xml", 0]], "files": 1, "urls": 3, "bytes": 90}'
    plan = HostSitemaps.of_text(older)
    assert (plan.todo, plan.files, plan.urls, plan.size) == (
        [("http://a.test/map.xml", 0)],
        1,
        3,
        90,
    )
    assert plan.tried_again == []
    assert plan.try_again("http://a.test/other.xml", 0)
    assert not plan.try_again("http://a.test/other.xml", 0)  # once only
    assert HostSitemaps.of_text(plan.as_text()).tried_again == ["http://a.test/other.xml"]


async def test_the_politeness_delay_holds_between_sitemaps_and_pages(db_url: str) -> None:
    app = site(
        {
            "/robots.txt": robots_naming("/one.xml", "/two.xml"),
            "/": PAGE,
            "/listed": PAGE,
            "/one.xml": xml(urlset("/listed")),
            "/two.xml": xml(urlset("/listed")),
        }
    )
    async with serving(app) as base:
        await crawl(db_url, [base], sitemaps=True, delay=0.15, concurrency=8)
    seen = app[SEEN]
    assert seen.paths() == ["/robots.txt", "/one.xml", "/two.xml", "/", "/listed"]
    assert min(seen.gaps(skip_robots=False)) >= 0.15


async def test_sitemaps_are_not_read_when_turned_off(db_url: str) -> None:
    app = site({"/": PAGE, "/listed": PAGE, "/sitemap.xml": xml(urlset("/listed"))})
    async with serving(app) as base:
        await crawl(db_url, [base], sitemaps=False)
    assert app[SEEN].paths() == ["/robots.txt", "/"]


async def test_a_host_s_sitemaps_give_at_most_sitemap_max_urls(
    db_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    listed = [f"/listed/{i}" for i in range(10)]
    app = site(
        {
            "/": PAGE,
            **dict.fromkeys(listed, PAGE),
            "/sitemap.xml": xml(index("/first.xml", "/second.xml")),
            "/first.xml": xml(urlset(*listed)),
            "/second.xml": xml(urlset(*listed)),
        }
    )
    registry = CollectorRegistry()
    with caplog.at_level(logging.WARNING, logger="crawler.fetch.visit"):
        async with serving(app) as base:
            await crawl(db_url, [base], sitemaps=True, sitemap_max_urls=6, registry=registry)
    paths = app[SEEN].paths()
    # the index's two entries, then four of the first file's ten: its limit
    assert {path for path in paths if path.startswith("/listed/")} == set(listed[:4])
    assert len([path for path in paths if path.startswith("/listed/")]) == 4
    assert "/second.xml" not in paths  # nothing left for it
    warnings = [r.getMessage() for r in caplog.records if "sitemap" in r.getMessage()]
    assert len(warnings) == 1
    assert "first.xml" in warnings[0]
    assert "4 entries" in warnings[0]
    assert sitemaps_read(registry, "cut") == 1


# a gzip stream that inflates to gigabytes: its blocks, each after a full flush, refer to
# nothing before them, so one block of a megabyte of spaces repeats. Its trailer's checksum
# is not computed: a reader that gets that far has failed already
_SPACES = b" " * (1 << 20)
BOMB_BLOCKS = 32 * 1024  # 32 GB of spaces inflated, about 32 MB sent


def _bomb_parts(origin: str) -> tuple[bytes, bytes]:
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    head = f"<urlset><url><loc>{origin}/before-the-bomb</loc></url><url><loc>{origin}/"
    start = packer.compress(head.encode()) + packer.flush(zlib.Z_FULL_FLUSH)
    block = packer.compress(_SPACES) + packer.flush(zlib.Z_FULL_FLUSH)
    return start, block


class Bomb:
    """Serves a gzip bomb as a sitemap, counting what it could send before the reader
    hung up."""

    def __init__(self, *, encoding: bool) -> None:
        self.encoding = encoding
        self.sent = 0
        self.size = 0

    async def serve(self, request: web.Request) -> web.StreamResponse:
        start, block = _bomb_parts(str(request.url.origin()))
        headers = {"Content-Type": "application/xml" if self.encoding else "application/gzip"}
        if self.encoding:
            headers["Content-Encoding"] = "gzip"
        response = web.StreamResponse(headers=headers)
        await response.prepare(request)
        chunk = block * 64
        self.size = len(start) + len(block) * BOMB_BLOCKS
        try:
            await response.write(start)
            self.sent = len(start)
            for _ in range(BOMB_BLOCKS // 64):
                await response.write(chunk)
                self.sent += len(chunk)
        except (ConnectionError, RuntimeError):
            pass  # the reader hung up
        return response


@pytest.mark.parametrize("encoding", [False, True], ids=["xml.gz", "content-encoding"])
async def test_a_gzip_bomb_is_inflated_only_to_the_protocol_s_50_mb(
    db_url: str, caplog: pytest.LogCaptureFixture, encoding: bool
) -> None:
    bomb = Bomb(encoding=encoding)
    app = site({"/": PAGE, "/before-the-bomb": PAGE, "/sitemap.xml": bomb.serve})
    registry = CollectorRegistry()
    with caplog.at_level(logging.WARNING, logger="crawler.fetch.visit"):
        async with serving(app) as base:
            await crawl(db_url, [base], sitemaps=True, registry=registry)
    assert app[SEEN].paths().count("/before-the-bomb") == 1
    assert bomb.sent < bomb.size // 4  # the reader stopped early
    assert sitemaps_read(registry, "cut") == 1
    assert any("52,428,800 bytes" in record.getMessage() for record in caplog.records)


BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE urlset [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<urlset><url><loc>{origin}/&lol9;</loc></url><url><loc>{origin}/after</loc></url></urlset>"""


async def test_entities_are_refused_billion_laughs_and_external_alike(db_url: str) -> None:
    external = (
        '<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY secret SYSTEM "file:///etc/hostname">]>'
        "<urlset><url><loc>{origin}/&secret;</loc></url></urlset>"
    )
    app = site(
        {
            "/robots.txt": robots_naming("/laughs.xml", "/external.xml", "/good.xml"),
            "/": PAGE,
            "/after": PAGE,
            "/listed": PAGE,
            "/laughs.xml": xml(lambda origin: BILLION_LAUGHS.replace("{origin}", origin)),
            "/external.xml": xml(lambda origin: external.replace("{origin}", origin)),
            "/good.xml": xml(urlset("/listed")),
        }
    )
    registry = CollectorRegistry()
    async with serving(app) as base:
        await crawl(db_url, [base], sitemaps=True, registry=registry)
    paths = app[SEEN].paths()
    assert sorted(paths) == sorted(
        ["/robots.txt", "/laughs.xml", "/external.xml", "/good.xml", "/", "/listed"]
    )
    assert sitemaps_read(registry, "failed") == 2
    assert sitemaps_read(registry, "read") == 1


async def test_a_sitemap_read_once_is_not_read_again_when_the_crawl_resumes(
    db_url: str,
) -> None:
    listed = [f"/listed/{i}" for i in range(4)]
    app = site({"/": PAGE, **dict.fromkeys(listed, PAGE), "/sitemap.xml": xml(urlset(*listed))})
    async with serving(app) as base:
        await crawl(db_url, [base], sitemaps=True, max_pages=1)
        assert app[SEEN].paths() == ["/robots.txt", "/sitemap.xml", "/"]
        await crawl(db_url, [base], sitemaps=True)
    paths = app[SEEN].paths()
    assert paths.count("/sitemap.xml") == 1
    assert all(paths.count(path) == 1 for path in listed)


async def test_a_sitemap_s_urls_outside_the_scope_are_not_fetched(db_url: str) -> None:
    elsewhere = site({"/": PAGE, "/listed": PAGE})
    async with serving(elsewhere, host="127.0.0.2") as other:
        app = site(
            {
                "/": PAGE,
                "/mine": PAGE,
                "/sitemap.xml": xml(
                    lambda origin: urlset("/mine")(origin).replace(
                        "</urlset>", f"<url><loc>{other}listed</loc></url></urlset>"
                    )
                ),
            }
        )
        async with serving(app) as base:
            await crawl(db_url, [base], sitemaps=True)
    assert app[SEEN].paths().count("/mine") == 1
    assert elsewhere[SEEN].paths() == []


async def test_sitemap_indexes_are_followed_two_levels_down_not_three(db_url: str) -> None:
    app = site(
        {
            "/": PAGE,
            "/deep": PAGE,
            "/sitemap.xml": xml(index("/level1.xml")),
            "/level1.xml": xml(index("/level2.xml")),
            "/level2.xml": xml(index("/level3.xml")),
            "/level3.xml": xml(urlset("/deep")),
        }
    )
    async with serving(app) as base:
        await crawl(db_url, [base], sitemaps=True)
    paths = app[SEEN].paths()
    assert paths.count("/level2.xml") == 1
    assert "/level3.xml" not in paths
    assert "/deep" not in paths


async def test_sitemap_fetches_are_not_counted_against_a_host_s_page_budget(db_url: str) -> None:
    listed = [f"/listed/{i}" for i in range(3)]
    app = site(
        {
            "/robots.txt": robots_naming("/one.xml", "/two.xml"),
            "/": PAGE,
            **dict.fromkeys(listed, PAGE),
            "/one.xml": xml(urlset(*listed)),
            "/two.xml": xml(urlset(*listed)),
        }
    )
    async with serving(app) as base:
        await crawl(db_url, [base], sitemaps=True, max_pages_per_host=2)
    paths = app[SEEN].paths()
    assert paths[:3] == ["/robots.txt", "/one.xml", "/two.xml"]
    assert len(paths) == 5  # and two pages: the budget's


async def test_a_sitemaps_answer_is_archived_with_the_pages_answers(
    db_url: str, tmp_path: Path
) -> None:
    """`--warc` keeps every answer: a sitemap's too, each once, with its body."""
    from tests.crawler.warcs import captures, read_records, twice

    body = urlset("/hidden/a")
    app = site(
        {
            "/robots.txt": robots_naming("/maps/pages.xml"),
            "/": PAGE,
            "/hidden/a": PAGE,
            "/maps/pages.xml": xml(body),
        }
    )
    async with serving(app) as base:
        await crawl(db_url, [base], sitemaps=True, warc=str(tmp_path / "warc"))
    records = read_records(tmp_path / "warc")
    archived = {r.uri: r for r in captures(records)}
    assert twice(records) == []
    assert set(archived) == {base + p for p in ("robots.txt", "", "hidden/a", "maps/pages.xml")}
    sitemap = archived[base + "maps/pages.xml"]
    assert sitemap.status == 200
    assert body(base.rstrip("/")).encode() in sitemap.payload
