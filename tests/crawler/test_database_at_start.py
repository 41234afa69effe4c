"""What a crawl's start refuses on its SQLite file: a crawl of another topic."""

from __future__ import annotations

import pytest

import storage
from crawler.config import ConfigError
from tests.crawler.helpers import SEEN, collection, crawl, html, links, serving, site


async def crawl_meta(db_url: str) -> dict[str, str]:
    engine = storage.open_engine(db_url)
    try:
        async with engine.connect() as connection:
            return await storage.get_meta(connection)
    finally:
        await engine.dispose()


async def test_another_topic_on_a_crawled_file_is_an_error_at_start_that_writes_nothing(
    db_url: str,
) -> None:
    app = site({"/": html(links("/a")), "/a": html(links()), "/b": html(links())})
    async with serving(app) as base:
        await crawl(db_url, [base], max_pages=1)
        meta, urls, served = (
            await crawl_meta(db_url),
            await collection(db_url),
            len(app[SEEN].paths()),
        )
        with pytest.raises(ConfigError, match=r"holds a crawl of another topic \('solar energy'\)"):
            await crawl(db_url, [base, f"{base}b"], topic="volcanic eruptions")
        assert len(app[SEEN].paths()) == served  # nothing fetched
        assert await crawl_meta(db_url) == meta
        assert await collection(db_url) == urls
        # the same topic resumes the crawl
        summary = await crawl(db_url, [base])
    assert summary.stop_reason == "frontier exhausted"
    assert set(await collection(db_url)) == {base, f"{base}a"}
