"""robots.txt as RFC 9309 and Google's reference parser read it, through the crawler's
cache as a visit asks it, and over real loopback servers."""

from __future__ import annotations

import pytest
from aiohttp import web

from crawler.fetch.robots import MAX_ROBOTS_BYTES, RobotsCache, Verdict
from tests.crawler.helpers import SEEN, Handler, collection, crawl, html, links, serving, site


def allowed(body: bytes | str, url: str, user_agent: str = "FooBot/1.0") -> bool:
    """The verdict for `url` under a robots.txt served as `body`, decoded as the fetcher
    decodes a body without a charset."""
    text = body if isinstance(body, str) else body.decode("utf-8", errors="replace")
    robots = RobotsCache(user_agent=user_agent, ttl=60.0, retry=60.0)
    return robots.verdict(robots.store("foo.bar", 200, text, 0.0), url) is Verdict.ALLOW


def test_an_unknown_line_between_user_agent_lines_leaves_them_one_group() -> None:
    body = "User-agent: FooBot\nInvalid-Unknown-Line: x\nUser-agent: *\nDisallow: /\n"
    assert not allowed(body, "http://foo.bar/x")
    # a Crawl-delay between them leaves them one group too, and applies to both
    robots = RobotsCache(user_agent="FooBot", ttl=60.0, retry=60.0)
    entry = robots.store("foo.bar", 200, body.replace("Invalid-Unknown-Line", "Crawl-delay"), 0)
    assert robots.verdict(entry, "http://foo.bar/x") is Verdict.DISALLOW
    body = "User-agent: FooBot\nCrawl-delay: 7\nUser-agent: BarBot\nDisallow: /\n"
    for agent in ("FooBot", "BarBot"):
        robots = RobotsCache(user_agent=agent, ttl=60.0, retry=60.0)
        entry = robots.store("foo.bar", 200, body, 0)
        assert robots.crawl_delay(entry) == 7.0
        assert robots.verdict(entry, "http://foo.bar/x") is Verdict.DISALLOW


@pytest.mark.parametrize(
    "mark", [b"\xef\xbb\xbf", b"\xef\xbb", b"\xef"], ids=["whole", "two bytes", "one byte"]
)
def test_a_byte_order_mark_whole_or_partial_keeps_the_first_group(mark: bytes) -> None:
    body = mark + b"User-Agent: foo\nDisallow: /AnyValue\n"
    assert not allowed(body, "http://foo.bar/AnyValue", user_agent="foo")
    assert allowed(body, "http://foo.bar/other", user_agent="foo")


def test_a_user_agent_value_is_its_first_word() -> None:
    body = "User-Agent: *\nAllow: /\nUser-Agent: FOO BAR\nDisallow: /\n"
    assert not allowed(body, "http://foo.bar/x", user_agent="foo")
    assert not allowed(body, "http://foo.bar/x", user_agent="Foo/2.1 (+http://foo.example)")
    assert allowed(body, "http://foo.bar/x", user_agent="bar")


def test_percent_encoded_patterns_match_as_written_never_decoded() -> None:
    body = "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%62%61%7A\nAllow: /a/ツ\n"
    assert not allowed(body, "http://foo.bar/foo/bar/baz")
    assert allowed(body, "http://foo.bar/foo/bar/%62%61%7A")
    assert allowed(body, "http://foo.bar/a/%E3%83%84")  # the pattern's non-ASCII is encoded
    # an escape's case does not matter in a pattern: it is written upper-case
    assert allowed("User-agent: *\nDisallow: /\nAllow: /a%3cd\n", "http://foo.bar/a%3Cd")


def test_the_longest_match_decides_and_allow_wins_a_tie() -> None:
    body = "User-agent: *\nDisallow: /folder/\nAllow: /folder/page\nAllow: /x$\nDisallow: /x\n"
    assert allowed(body, "http://foo.bar/folder/page")
    assert not allowed(body, "http://foo.bar/folder/other")
    assert allowed(body, "http://foo.bar/x")
    assert not allowed(body, "http://foo.bar/xy")
    tie = "User-agent: *\nDisallow: /page\nAllow: /page\n"
    assert allowed(tie, "http://foo.bar/page")


def test_wildcards_and_the_end_anchor() -> None:
    body = "User-agent: *\nDisallow: /*.php$\nDisallow: /fish*food\nDisallow: /**a*b*c\n"
    assert not allowed(body, "http://foo.bar/index.php")
    assert allowed(body, "http://foo.bar/index.php?x=1")
    assert not allowed(body, "http://foo.bar/fish/and/more/food/x")
    assert not allowed(body, "http://foo.bar/zzazzbzzc")
    assert allowed(body, "http://foo.bar/" + "a" * 10_000 + "b")  # no c: linear, not stuck


def test_the_group_naming_the_crawler_replaces_the_global_one() -> None:
    body = "User-agent: *\nDisallow: /\n\nUser-agent: FooBot\nDisallow: /private\n"
    assert allowed(body, "http://foo.bar/public")
    assert not allowed(body, "http://foo.bar/private")
    assert not allowed(body, "http://foo.bar/public", user_agent="BarBot")
    assert allowed(body, "http://foo.bar/robots.txt", user_agent="BarBot")


def test_crawl_delay_and_sitemaps_are_kept() -> None:
    body = (
        "Sitemap: http://foo.bar/one.xml\nUser-agent: *\nCrawl-delay: 2.5\nDisallow: /x\n"
        "User-agent: FooBot\nCrawl-delay: 4\nCrawl-delay: 1\nsitemap: http://foo.bar/two.xml\n"
    )
    robots = RobotsCache(user_agent="FooBot", ttl=60.0, retry=60.0)
    entry = robots.store("foo.bar", 200, body, 0)
    assert robots.crawl_delay(entry) == 4.0  # the largest of its group's
    assert entry.rules is not None
    assert entry.rules.sitemaps == ("http://foo.bar/one.xml", "http://foo.bar/two.xml")
    other = RobotsCache(user_agent="BarBot", ttl=60.0, retry=60.0)
    assert other.crawl_delay(other.store("foo.bar", 200, body, 0)) == 2.5


def test_lines_end_at_cr_lf_or_both_and_a_missing_colon_is_tolerated() -> None:
    body = "User-agent: FooBot\r\nDisallow: /a\rDisallow /b\nDisallow: /c # not /d\n"
    assert [allowed(body, f"http://foo.bar/{p}") for p in "abcd"] == [False] * 3 + [True]


def test_the_path_rules_match_is_the_path_parameters_and_query() -> None:
    from crawler.net.robots_txt import RobotsTxt, path_params_query

    assert path_params_query("http://foo.bar/a;b?c=1#frag") == "/a;b?c=1"
    assert path_params_query("http://foo.bar") == "/"
    assert path_params_query("http://foo.bar?x") == "/?x"
    assert path_params_query("//foo.bar/x") == "/x"
    assert RobotsTxt.parse("").allowed("http://foo.bar/", "foobot")


def raw(body: bytes, content_type: str = "text/plain") -> Handler:
    async def handler(_request: web.Request) -> web.Response:
        return web.Response(body=body, headers={"Content-Type": content_type})

    return handler


def private_and_public(robots: bytes) -> web.Application:
    pages = {"/": html(links("/private", "/public")), "/private": html("x"), "/public": html("y")}
    return site({"/robots.txt": raw(robots), **pages})


async def test_a_robots_txt_with_a_byte_order_mark_disallows(db_url: str) -> None:
    robots = b"\xef\xbb\xbfUser-agent: *\nDisallow: /private\n"
    app = private_and_public(robots)
    async with serving(app) as base:
        await crawl(db_url, [base])
    pages = await collection(db_url)
    assert pages[base + "private"].error == "robots"
    assert "/private" not in app[SEEN].paths()
    assert "/public" in app[SEEN].paths()


async def test_a_rule_after_400_kib_of_comments_applies(db_url: str) -> None:
    padding = b"# " + b"x" * 98 + b"\n"
    comments = padding * (400 * 1024 // len(padding) + 1)
    robots = comments + b"User-agent: *\nDisallow: /private\n"
    assert 400 * 1024 < len(robots) <= MAX_ROBOTS_BYTES
    app = private_and_public(robots)
    async with serving(app) as base:
        await crawl(db_url, [base])
    pages = await collection(db_url)
    assert pages[base + "private"].error == "robots"
    assert app[SEEN].paths().count("/private") == 0
    assert app[SEEN].paths().count("/public") == 1
