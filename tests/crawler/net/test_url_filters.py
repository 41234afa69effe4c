"""The URL filters: include and exclude patterns, searched in the canonical URL, met by
every URL before it is queued (links, seeds, redirect targets)."""

from __future__ import annotations

from pathlib import Path

import pytest
from yarl import URL

from crawler.config import ConfigError, CrawlConfig, build_config
from crawler.net.scope import LinkScope, Scope
from crawler.net.url_filters import UrlFilters
from tests.crawler.helpers import SEEN, crawl, html, links, serving, site


def test_a_url_is_admitted_by_one_include_at_least_and_no_exclude() -> None:
    filters = UrlFilters.of(include=[r"/docs/", r"\.html$"], exclude=[r"/docs/old/", "print"])
    assert filters.admits("http://a.test/docs/x")
    assert filters.admits("http://a.test/guide.html")
    assert not filters.admits("http://a.test/blog/x")  # no include matches
    assert not filters.admits("http://a.test/docs/old/x")  # an exclude matches
    assert not filters.admits("http://a.test/docs/x?print=1")
    assert UrlFilters.of(exclude=["print"]).admits("http://a.test/blog/")  # no include: all
    assert UrlFilters().admits("http://a.test/anything")


def test_a_refusal_names_the_pattern() -> None:
    filters = UrlFilters.of(include=["/docs/"], exclude=["old"])
    assert filters.refusal("http://a.test/docs/old") == "it matches exclude_urls 'old'"
    assert filters.refusal("http://a.test/blog") == "it matches no include_urls pattern"
    assert filters.refusal("http://a.test/docs/new") is None


def test_the_scope_and_a_link_scope_apply_the_filters() -> None:
    scope = Scope.of(["a.test"], urls=UrlFilters.of(exclude=[r"\?page="]))
    assert scope.allows(URL("http://a.test/list"))
    assert not scope.allows(URL("http://a.test/list?page=2"))
    linked = LinkScope(scope)
    assert linked.host("http://a.test/list", 1) == "a.test"
    assert linked.host("http://a.test/list?page=2", 1) is None
    assert linked.host("http://a.test/list?page=2", 0) is None  # remembered, at any depth


def test_an_invalid_pattern_is_an_error_naming_it_and_its_setting() -> None:
    with pytest.raises(ConfigError, match=r"'include_urls'.*'docs\('"):
        CrawlConfig(include_urls=("ok", "docs("))
    with pytest.raises(ConfigError, match=r"'exclude_urls'.*'\[a'"):
        build_config(flag_values={"exclude_urls": ["[a"]}, environ={})


def test_the_filters_are_flags_and_lists_in_the_settings_file(tmp_path: Path) -> None:
    from crawler.cli import build_parser
    from crawler.cli.crawl import config_from_args

    path = tmp_path / "crawl.toml"
    path.write_text('[crawl]\ninclude-urls = ["/docs/", "/api/"]\n')
    args = build_parser().parse_args(
        ["run", "--config", str(path), "--exclude-url", "old", "--exclude-url", "print"]
    )
    config = config_from_args(args)
    assert config.include_urls == ("/docs/", "/api/")
    assert config.exclude_urls == ("old", "print")


async def test_a_crawl_asks_for_no_url_the_filters_refuse(tmp_path: Path) -> None:
    app = site(
        {
            "/": html(links("/docs/a", "/docs/old/b", "/blog/c", "/go")),
            "/docs/a": html(links("/docs/old/d", "/docs/e?print=1", "/docs/f")),
            "/docs/f": html(links("/")),
            "/docs/old/b": html(links()),
            "/docs/old/d": html(links()),
            "/docs/e": html(links()),
            "/blog/c": html(links()),
            "/go": html("", status=302, headers={"Location": "/blog/c"}),
        }
    )
    async with serving(app) as base:
        summary = await crawl(
            str(tmp_path / "c.db"),
            [base],
            include_urls=(r"/docs/", r"/go$", r":[0-9]+/$"),
            exclude_urls=(r"/old/", "print"),
        )
    paths = app[SEEN].paths()
    assert sorted(p for p in paths if p != "/robots.txt") == ["/", "/docs/a", "/docs/f", "/go"]
    assert summary.outcomes.get("out_of_scope") == 1  # /go's redirect to /blog/c


async def test_a_seed_the_filters_refuse_is_an_error_at_start_naming_it(tmp_path: Path) -> None:
    app = site({"/": html(links())})
    async with serving(app) as base:
        with pytest.raises(ConfigError, match=r"'seeds'.*/blog/.*exclude_urls 'blog'"):
            await crawl(str(tmp_path / "c.db"), [base, f"{base}blog/"], exclude_urls=("blog",))
    assert app[SEEN].paths() == []
