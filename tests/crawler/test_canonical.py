"""Canonical URLs: a page that names another URL of its host as its canonical one
(`<link rel=canonical>` in its head, or a `Link: <...>; rel="canonical"` header) is
stored once, under that URL, which is never asked for; a second page naming a URL
stored already is a counted variant, stored without its text and never asked for
again. A canonical URL elsewhere (another host, out of scope, refused by the URL
filters), one the page's declarations disagree on, or a header that cannot be read, is
ignored: the page is stored as any other."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from aiohttp import web
from prometheus_client import CollectorRegistry

import storage
from crawler.counts import Counts
from crawler.reporting.collection import export, status, status_counts
from tests.crawler.helpers import SEEN, Handler, collection, crawl, html, serving, site

WORDS = "solar energy panels on the roof of a house"


def page(*hrefs: str, head: str = "", words: str = WORDS) -> str:
    anchors = "".join(f'<a href="{href}">{words}</a>' for href in hrefs)
    return (
        f"<html><head><title>{words}</title>{head}</head>"
        f"<body><p>{words}</p>{anchors}</body></html>"
    )


def canonical(href: str) -> str:
    return f'<link rel="canonical" href="{href}">'


def asked(app: web.Application) -> list[str]:
    return [path for path in app[SEEN].paths() if path != "/robots.txt"]


async def texts(db: str) -> dict[str, str | None]:
    engine = storage.open_engine(db)
    try:
        async with engine.connect() as connection:
            return {r.url: r.text async for r in storage.iter_export(connection, text=True)}
    finally:
        await engine.dispose()


async def test_a_page_naming_another_url_is_stored_under_it_which_is_never_asked_for(
    tmp_path: Path,
) -> None:
    db = str(tmp_path / "c.db")
    app = site(
        {
            "/": html(page("/a", "/c?utm_source=feed")),
            "/a": html(page("/b", "/d", head=canonical("/b"))),
            "/b": html(page()),
            # its own URL once the tracking parameter is gone: nothing special
            "/c": html(page(head=canonical("/c?utm_source=feed"))),
            "/d": html(page()),
        }
    )
    async with serving(app) as base:
        await crawl(db, [base])
    assert sorted(asked(app)) == ["/", "/a", "/c", "/d"]  # /b never, though /a links to it
    records = await collection(db)
    assert set(records) == {base, f"{base}a", f"{base}c", f"{base}d"}
    stored = records[f"{base}a"]
    assert stored.canonical_url == f"{base}b"
    assert (stored.error, stored.title) == (None, WORDS)
    assert (await texts(db))[f"{base}a"]
    assert records[f"{base}c"].canonical_url is None
    assert all(records[url].canonical_url is None for url in (base, f"{base}d"))
    out = io.StringIO()
    await export(db, out)
    exported = {row["url"]: row for row in map(json.loads, out.getvalue().splitlines())}
    assert exported[f"{base}a"]["canonical_url"] == f"{base}b"
    assert exported[f"{base}c"]["canonical_url"] is None


def _two_naming_b() -> dict[str, Handler]:
    """A site whose /a and /a2 both name /b as their canonical URL."""
    return {
        "/": html(page("/a", "/a2")),
        "/a": html(page(head=canonical("/b"))),
        "/a2": html(page(head=canonical("/b"))),
        "/b": html(page()),
    }


async def test_two_pages_naming_one_url_are_one_page_and_a_counted_variant(
    tmp_path: Path,
) -> None:
    db = str(tmp_path / "c.db")
    app = site(_two_naming_b())
    registry = CollectorRegistry()
    async with serving(app) as base:
        run = await crawl(db, [base], registry=registry)
    assert sorted(asked(app)) == ["/", "/a", "/a2"]  # each once, /b never
    records = await collection(db)
    named = [records[f"{base}a"], records[f"{base}a2"]]
    assert all(record.canonical_url == f"{base}b" for record in named)
    stored = [record for record in named if record.error is None]
    variants = [record for record in named if record.error == "canonical_variant"]
    assert len(stored) == len(variants) == 1
    assert (variants[0].title, variants[0].relevance) == (None, None)
    assert (await texts(db))[variants[0].url] is None
    assert (await texts(db))[stored[0].url]

    counts = Counts.of(run.outcomes, relevant=run.relevant)
    assert (counts.pages, counts.canonical_variants, counts.visited) == (2, 1, 3)
    assert counts.errors == {}
    assert status_counts(await status(db)) == counts
    fetches = registry.get_sample_value("crawler_fetches_total", {"outcome": "canonical_variant"})
    assert fetches == 1
    assert registry.get_sample_value("crawler_pages_fetched_total") == 2


@pytest.mark.parametrize("processors", [1, 2])
async def test_the_link_header_names_a_canonical_url_as_the_element_does(
    tmp_path: Path, processors: int
) -> None:
    """With two processors the page is analysed in a worker process (inline_below 0),
    which is handed the header."""
    db = str(tmp_path / "c.db")

    async def with_headers(_request: web.Request) -> web.Response:
        response = web.Response(text=page("b", "/next"), content_type="text/html")
        preload = '</style.css>; rel=preload; as=style, <b>; rel="Canonical alternate"'
        response.headers.add("Link", preload)
        response.headers.add("Link", "</next>; rel=next")
        return response

    routes = {"/": html(page("/dir/a")), "/dir/a": with_headers, "/dir/b": html(page())}
    app = site({**routes, "/next": html(page())})
    async with serving(app) as base:
        await crawl(db, [base], processors=processors, inline_below=0)
    # relative to the page: /dir/b, never asked though linked
    assert sorted(asked(app)) == ["/", "/dir/a", "/next"]
    records = await collection(db)
    assert records[f"{base}dir/a"].canonical_url == f"{base}dir/b"


async def test_a_canonical_url_elsewhere_is_ignored_and_never_asked_for(tmp_path: Path) -> None:
    db = str(tmp_path / "c.db")
    other: dict[str, Handler] = {"/b": html(page())}
    elsewhere = site(other)
    async with serving(elsewhere, "127.0.0.2") as second:
        home = site(
            {
                "/": html(page("/a", "/x", "/y", "/z")),
                "/a": html(page(head=canonical(f"{second}b"))),  # another host
                "/x": html(page(head=canonical("/private/x"))),  # refused by the filters
                "/y": html(page(head=canonical("/b") + canonical("/c"))),  # they disagree
                "/z": html(page(head=canonical("/b")), headers={"Link": '</c>; rel="canonical"'}),
                "/b": html(page()),
                "/c": html(page()),
            }
        )
        async with serving(home) as base:
            await crawl(
                db,
                [base],
                allowed_domains=("127.0.0.1", "127.0.0.2"),
                exclude_urls=("/private/",),
            )
    assert asked(elsewhere) == []
    assert sorted(asked(home)) == ["/", "/a", "/x", "/y", "/z"]
    records = await collection(db)
    for path in ("a", "x", "y", "z"):
        record = records[f"{base}{path}"]
        assert (record.canonical_url, record.error) == (None, None), path
        assert (await texts(db))[record.url], path


async def test_a_header_or_element_that_cannot_be_read_is_ignored(tmp_path: Path) -> None:
    db = str(tmp_path / "c.db")
    app = site(
        {
            "/": html(page("/a", "/e")),
            "/a": html(page(), headers={"Link": '<b; rel="canonical'}),
            "/e": html(page(head=canonical("http://[bad") + '<link rel="canonical">')),
            "/b": html(page()),
        }
    )
    async with serving(app) as base:
        await crawl(db, [base])
    assert sorted(asked(app)) == ["/", "/a", "/e"]
    records = await collection(db)
    for path in ("a", "e"):
        record = records[f"{base}{path}"]
        assert (record.canonical_url, record.error) == (None, None), path


async def test_a_resumed_crawl_asks_for_neither_a_variant_nor_the_url_it_names(
    tmp_path: Path,
) -> None:
    db = str(tmp_path / "c.db")
    app = site({**_two_naming_b(), "/later": html(page("/a", "/a2", "/b"))})
    async with serving(app) as base:
        await crawl(db, [base])
        first = sorted(asked(app))
        await crawl(db, [base, f"{base}later"])
    assert first == ["/", "/a", "/a2"]
    assert sorted(asked(app)) == ["/", "/a", "/a2", "/later"]
    assert sum(r.error == "canonical_variant" for r in (await collection(db)).values()) == 1
