"""The Python API, used as a user would: a crawl run in-process on a loopback server, its
pages seen as they are stored, and a finished crawl read back from its SQLite file."""

from __future__ import annotations

import asyncio
import contextlib
import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

import crawler
from tests.crawler.helpers import SEEN, html, links, serving, site

PAGES = {
    "/": html(links("/a", "/b", "/c")),
    "/a": html(links("/d", words="solar panels on roofs")),
    "/b": html(links(words="wind turbines at sea")),
    "/c": html(links(words="solar cells and their efficiency")),
    "/d": html(links(words="solar energy storage")),
}
LOOPBACK = {"allow_private_networks": True, "delay": 0.0, "metrics_port": 0, "processors": 1}


@pytest.fixture
def gc_untouched() -> Iterator[tuple[int, int, int]]:
    """The interpreter's own collector thresholds, put back after the test."""
    before = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield (700, 10, 10)
    gc.set_threshold(*before)


async def test_a_crawl_in_process_hands_each_page_as_it_is_stored(
    tmp_path: Path, gc_untouched: tuple[int, int, int]
) -> None:
    db = tmp_path / "solar.db"
    seen: list[crawler.Page] = []
    async with serving(site(PAGES)) as base:
        summary = await crawler.crawl(
            [base], "solar energy", db=str(db), on_page=seen.append, **LOOPBACK
        )
    assert summary.stop_reason == "frontier exhausted"
    assert sorted(page.url.removeprefix(base.rstrip("/")) for page in seen) == [
        "/",
        "/a",
        "/b",
        "/c",
        "/d",
    ]
    solar = next(page for page in seen if page.url.endswith("/d"))
    assert solar.title == "solar energy storage"
    assert "solar energy storage" in (solar.text or "")
    assert solar.relevance is not None
    assert solar.relevance > next(p for p in seen if p.url.endswith("/b")).relevance  # type: ignore[operator]
    # the host process's garbage collector is left as it was
    assert gc.get_threshold() == gc_untouched
    # and the finished crawl reads back the same pages, from its file
    stored = [page async for page in crawler.read_pages(str(db))]
    assert {page.url for page in stored} == {page.url for page in seen}
    assert {page.url: page.text for page in stored} == {page.url: page.text for page in seen}


async def test_the_process_wide_tuning_only_when_asked(
    tmp_path: Path, gc_untouched: tuple[int, int, int]
) -> None:
    async with serving(site(PAGES)) as base:
        await crawler.crawl(
            [base], "solar energy", db=str(tmp_path / "c.db"), tune_process=True, **LOOPBACK
        )
    assert gc.get_threshold()[0] > gc_untouched[0]


async def test_pages_as_an_async_iterator_and_an_early_stop(tmp_path: Path) -> None:
    app = site(PAGES)
    async with serving(app) as base:
        first = []
        pages = crawler.stream_pages([base], "solar energy", db=str(tmp_path / "s.db"), **LOOPBACK)
        async with contextlib.aclosing(pages):  # closed, and the crawl ended, on leaving
            async for page in pages:
                first.append(page)
                if len(first) == 2:
                    break
        assert len(first) == 2
        requests = len(app[SEEN].paths())
        await asyncio.sleep(0.2)
        assert len(app[SEEN].paths()) == requests  # the crawl stopped with the loop


async def test_the_blocking_wrapper_runs_a_whole_crawl(tmp_path: Path) -> None:
    async with serving(site(PAGES)) as base:
        summary = await asyncio.to_thread(
            crawler.crawl_blocking, [base], "solar energy", db=str(tmp_path / "b.db"), **LOOPBACK
        )
    assert summary.fetched == 5


async def test_a_bad_setting_is_an_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(crawler.ConfigError, match="'concurrency' must be greater than 0"):
        await crawler.crawl(["http://127.0.0.1:9/"], "x", db=str(tmp_path / "x.db"), concurrency=0)
