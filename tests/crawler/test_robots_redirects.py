"""robots.txt redirects and groups (RFC 9309), and the network guard on every hop."""

from __future__ import annotations

import pytest

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

# only 127.0.0.2 may be connected to: 127.0.0.1 and the names resolving to it are refused
GUARDED = {
    "allow_private_networks": False,
    "allowed_networks": ("127.0.0.2/32",),
    "allowed_domains": ("127.0.0.2", "127.0.0.1", "localhost"),
}


async def test_no_redirect_of_robots_txt_or_a_page_reaches_a_refused_address(
    db_url: str,
) -> None:
    refused = await serve(site({}, robots="User-agent: *\nAllow: /\n"), host="127.0.0.1")
    port = refused.port
    try:
        literal = site({"/robots.txt": redirect(f"http://127.0.0.1:{port}/robots.txt")})
        by_name = site({"/robots.txt": redirect(f"http://localhost:{port}/robots.txt")})
        pages = site(
            {
                "/": html(links("/to-literal", "/to-name")),
                "/to-literal": redirect(f"http://127.0.0.1:{port}/secret"),
                "/to-name": redirect(f"http://localhost:{port}/secret"),
            }
        )
        async with (
            serving(literal, "127.0.0.2") as literal_base,
            serving(by_name, "127.0.0.2") as name_base,
            serving(pages, "127.0.0.2") as pages_base,
        ):
            seeds = [literal_base, name_base, pages_base]
            summary = await crawl(db_url, seeds, max_retries=1, **GUARDED)
        assert refused.app[SEEN].requests == []  # type: ignore[index]
    finally:
        await refused.close()
    assert summary.stop_reason == "frontier exhausted"
    stored = await collection(db_url)
    # robots.txt that could not be had: nothing on those hosts is fetched
    assert stored[literal_base].error == stored[name_base].error == "deferred"
    assert literal[SEEN].paths() == by_name[SEEN].paths() == ["/robots.txt"] * 2
    assert stored[pages_base + "to-literal"].error == "private_network"
    assert stored[pages_base + "to-name"].error == "private_network"


@pytest.mark.parametrize(("hops", "secret_fetched"), [(5, False), (6, True)])
async def test_robots_txt_is_followed_through_five_redirects(
    db_url: str, hops: int, secret_fetched: bool
) -> None:
    """Five redirects reach the rules (RFC 9309); a sixth makes robots.txt unavailable,
    which allows everything, as a 404 does."""
    chain = {f"/robots{i}.txt": redirect(f"/robots{i + 1}.txt") for i in range(1, hops)}
    app = site(
        {
            "/robots.txt": redirect("/robots1.txt"),
            **chain,
            f"/robots{hops}.txt": text("User-agent: *\nDisallow: /secret\n", "text/plain"),
            "/": html(links("/secret", "/open")),
            "/secret": html(links()),
            "/open": html(links()),
        }
    )
    async with serving(app) as base:
        await crawl(db_url, [base])
    robots_requests = [p for p in app[SEEN].paths() if p.startswith("/robots")]
    assert len(robots_requests) == min(hops, 5) + 1
    assert ("/secret" in app[SEEN].paths()) is secret_fetched
    assert (await collection(db_url))[base + "secret"].error == (
        None if secret_fetched else "robots"
    )


async def test_a_robots_txt_redirect_waits_for_its_targets_turn(db_url: str) -> None:
    """The hop to another host's robots.txt is that host's request like any other: the
    delay holds between it and the target host's own pages."""
    delay = 0.3
    target = site(
        {
            "/": html(links(*(f"/p{i}" for i in range(8)))),
            **{f"/p{i}": html(links()) for i in range(8)},
            "/shared-robots.txt": text("User-agent: *\nAllow: /\n", "text/plain"),
        }
    )
    async with serving(target) as target_base:
        origins = [
            site({"/robots.txt": redirect(target_base + "shared-robots.txt"), "/": html("x")})
            for _ in range(4)
        ]
        async with (
            serving(origins[0]) as a,
            serving(origins[1]) as b,
            serving(origins[2]) as c,
            serving(origins[3]) as d,
        ):
            await crawl(db_url, [target_base, a, b, c, d], delay=delay)
    asked = target[SEEN]
    assert asked.paths().count("/shared-robots.txt") == 4
    assert min(asked.gaps(skip_robots=False)) >= delay * 0.95


async def test_robots_groups_match_the_product_token_not_the_contact_url(db_url: str) -> None:
    """A group for `example` does not apply to `testbot/2.0 (+http://example.com/bot)`."""
    robots = "User-agent: example\nDisallow: /\n\nUser-agent: *\nDisallow: /private\n"
    app = site(
        {"/": html(links("/page", "/private")), "/page": html("x"), "/private": html("x")},
        robots=robots,
    )
    async with serving(app) as base:
        await crawl(db_url, [base], user_agent="testbot/2.0 (+http://example.com/bot)")
    stored = await collection(db_url)
    assert stored[base + "page"].error is None
    assert stored[base + "private"].error == "robots"
    assert "/private" not in app[SEEN].paths()
