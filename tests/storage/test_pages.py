"""One stored page read whole (the API's page view), and URL ids looked up by URL."""

from __future__ import annotations

from pathlib import Path

import storage
from storage.pages import page_detail, url_ids
from tests.crawler.helpers import crawled_site, html

ROUTES = {
    "/": html(
        "<html><head><title>Solar panels</title></head><body><main><p>Solar panels turn "
        'sunlight into electricity.</p><a href="/a">a</a><a href="/b">b</a></main></body></html>'
    ),
    "/a": html("<html><head><title>A</title></head><body><p>solar a</p></body></html>"),
    "/b": html("<html><head><title>B</title></head><body><p>solar b</p></body></html>"),
}


async def test_a_page_with_its_text_outlinks_and_fetch_facts(tmp_path: Path) -> None:
    db_url = await crawled_site(tmp_path / "crawl.db", ROUTES, topic="solar panels")
    engine = storage.open_engine(db_url)
    try:
        async with engine.connect() as connection:
            ids = await url_ids(connection, ["nowhere"])
            assert ids == {}
            (root_url,) = [u for u in await _urls(connection) if u.endswith("/")]
            ids = await url_ids(connection, [root_url, "nowhere"])
            page = await page_detail(connection, ids[root_url])
            assert page is not None
            assert (page.url, page.title, page.status) == (root_url, "Solar panels", 200)
            assert str(page.content_type).startswith("text/html")
            assert (page.content_length or 0) > 0
            assert page.fetched_at is not None
            assert (page.relevance or 0) > 0
            assert "sunlight into electricity" in str(page.text)
            assert sorted(link.url.rsplit("/", 1)[1] for link in page.outlinks) == ["a", "b"]
            assert all(link.visited for link in page.outlinks)
            assert not page.more_outlinks
            few = await page_detail(connection, ids[root_url], outlinks=1)
            assert few is not None
            assert (len(few.outlinks), few.more_outlinks) == (1, True)
            assert await page_detail(connection, 10_000) is None
    finally:
        await engine.dispose()


async def _urls(connection) -> list[str]:  # type: ignore[no-untyped-def]
    return [record.url async for record in storage.iter_export(connection)]
