"""Tracking parameters (`utm_*`, `gclid`, ...) are no part of a page's canonical URL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from aiohttp import web

from crawler.config import ConfigError, CrawlConfig
from crawler.net.url_parameters import TRACKING_PARAMETERS, strip_parameters
from crawler.net.urls import LinkResolver, canonical, canonicalize
from tests.crawler.helpers import Handler, crawl, html, links, serving, site


@pytest.fixture
def default_rules() -> Iterator[None]:
    yield
    strip_parameters(TRACKING_PARAMETERS)


def test_the_tracking_parameters_leave_the_canonical_url() -> None:
    assert canonical("http://a.test/p?utm_source=x&id=3&gclid=y") == "http://a.test/p?id=3"
    assert canonical("http://a.test/p?UTM_Medium=x&fbclid=1") == "http://a.test/p"
    assert canonical("http://a.test/p?_ga=1&mc_cid=2&mc_eid=3&msclkid=4&yclid=5") == (
        "http://a.test/p"
    )
    assert canonical("http://a.test/p?utmost=1&page=2") == "http://a.test/p?utmost=1&page=2"
    resolver = LinkResolver()
    base = resolver.base(canonicalize("http://a.test/dir/"))
    assert resolver.resolve("p?utm_campaign=spring", base) == "http://a.test/dir/p"
    assert resolver.resolve("/q?igshid=z&x=1", base) == "http://a.test/q?x=1"


def test_the_stripped_parameters_are_a_setting_of_globs(default_rules: None) -> None:
    strip_parameters(["ref", "pk_*"])
    assert canonical("http://a.test/p?ref=home&pk_kwd=a&utm_source=x") == (
        "http://a.test/p?utm_source=x"
    )
    assert CrawlConfig().strip_params == TRACKING_PARAMETERS
    with pytest.raises(ConfigError, match=r"'strip_params'.*'a=b'"):
        CrawlConfig(strip_params=("a=b",))


def _recorded(handler: Handler, asked: list[str]) -> Handler:
    async def record(request: web.Request) -> web.StreamResponse:
        asked.append(request.path_qs)
        return await handler(request)

    return record


async def test_a_page_linked_with_tracking_parameters_is_asked_for_once(tmp_path: Path) -> None:
    asked: list[str] = []
    home = links("/p?utm_source=news", "/p?gclid=abc", "/p", "/q?fbclid=1&id=2")
    routes = {"/": html(home), "/p": html(links()), "/q": html(links())}
    app = site({path: _recorded(handler, asked) for path, handler in routes.items()})
    async with serving(app) as base:
        await crawl(str(tmp_path / "c.db"), [f"{base}?utm_medium=seed"])
    assert sorted(asked) == ["/", "/p", "/q?id=2"]
