"""A link that cannot be read costs only itself: its page is stored with the others."""

from __future__ import annotations

from tests.crawler.helpers import SEEN, collection, crawl, html, links, redirect, serving, site

UNREADABLE = [
    "http://[::1.]/",
    "http://[::.1]/",
    "http://[::1.2.]/",
    "http://[::127.0.0.1.]/",
    "http://[0:1:2:3:4:5:6:7:8]/",
    "http://[:::]/",
    "http://][@a@/",
]


async def test_a_page_with_unreadable_links_is_stored_with_its_good_ones(db_url: str) -> None:
    based = {
        f"/based-{i}": html(
            f'<html><head><base href="{href}"><title>solar</title></head>'
            f'<body><p>solar energy</p><a href="after-base-{i}">solar</a></body></html>'
        )
        for i, href in enumerate(UNREADABLE)
    }
    after_base = {f"/after-base-{i}": html(links()) for i in range(len(UNREADABLE))}
    app = site(
        {
            "/": html(links("/good", *UNREADABLE, *based, "/to-unreadable", "/last")),
            "/good": html(links()),
            "/last": html(links()),
            "/to-unreadable": redirect(UNREADABLE[0]),
            **based,
            **after_base,
        }
    )
    async with serving(app) as base:
        # each a seed too, so that each shows what becomes of it on its own
        seeds = [base, *(base + path[1:] for path in (*based, "/to-unreadable"))]
        summary = await crawl(db_url, seeds)
    assert summary.stop_reason == "frontier exhausted"
    pages = await collection(db_url)
    assert {url.removeprefix(base): page.error for url, page in pages.items()} == {
        "": None,
        "good": None,
        "last": None,
        "to-unreadable": "bad_redirect",
        **{path[1:]: None for path in based},
        # a bad <base href> is ignored: the page's links resolve against the page
        **{path[1:]: None for path in after_base},
    }
    assert pages[base].title == "solar energy panels"
    fetched = app[SEEN].paths()
    expected = ["/robots.txt", "/", "/good", "/last", "/to-unreadable", *based, *after_base]
    assert sorted(fetched) == sorted(expected)
