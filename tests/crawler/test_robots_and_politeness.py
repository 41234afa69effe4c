"""robots.txt (RFC 9309) and politeness, measured at real loopback servers."""

from __future__ import annotations

import asyncio
import contextlib
import itertools

import pytest
from aiohttp import web

from tests.crawler.helpers import (
    SEEN,
    Handler,
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

PAGES = [f"/p{i}" for i in range(6)]


def chain_site(
    robots: str | None = "User-agent: *\nAllow: /\n", serve_seconds: float = 0.0, **routes: object
):
    def page() -> Handler:
        if not serve_seconds:
            return html(links(*PAGES))

        async def slow(_request: web.Request) -> web.Response:
            await asyncio.sleep(serve_seconds)
            return web.Response(text=links(*PAGES), content_type="text/html")

        return slow

    pages = {path: page() for path in PAGES}
    return site({"/": html(links(*PAGES)), **pages, **routes}, robots=robots)  # type: ignore[dict-item]


async def test_disallowed_urls_are_never_requested_and_are_recorded(db_url: str) -> None:
    app = chain_site(
        robots="User-agent: testbot\nDisallow: /p1\n\nUser-agent: *\nDisallow: /p2\n",
    )
    async with serving(app) as base:
        await crawl(db_url, [base], user_agent="testbot/2.0 (+http://example.com/bot)")
    pages = await collection(db_url)
    assert pages[base + "p1"].error == "robots"  # our group applies...
    assert pages[base + "p2"].error is None  # ...not the catch-all one
    assert "/p1" not in app[SEEN].paths()
    assert app[SEEN].paths().count("/robots.txt") == 1  # cached for the host


@pytest.mark.parametrize("status", [404, 403, 410])
async def test_a_4xx_robots_txt_allows_everything(db_url: str, status: int) -> None:
    app = chain_site(robots=None, **{"/robots.txt": text("no", "text/plain", status=status)})
    async with serving(app) as base:
        await crawl(db_url, [base])
    pages = await collection(db_url)
    assert all(page.error is None for page in pages.values())
    assert len(pages) == len(PAGES) + 1


async def test_a_5xx_robots_txt_disallows_until_it_recovers(db_url: str) -> None:
    answers = iter([500, 503])

    async def flaky_robots(_request: web.Request) -> web.Response:
        status = next(answers, 200)
        return web.Response(text="User-agent: *\nDisallow: /p3\n", status=status)

    app = chain_site(robots=None, **{"/robots.txt": flaky_robots})
    async with serving(app) as base:
        await crawl(db_url, [base], robots_retry=0.2, duration=10)
    paths = app[SEEN].paths()
    assert paths[:3] == ["/robots.txt"] * 3  # no page before robots.txt answered
    pages = await collection(db_url)
    assert pages[base].error is None
    assert pages[base + "p3"].error == "robots"


async def test_crawl_delay_and_delay_are_kept_between_requests(db_url: str) -> None:
    app = chain_site(robots="User-agent: *\nCrawl-delay: 0.3\n")
    server = await serve(app)
    try:
        await crawl(db_url, [str(server.make_url("/"))], delay=0.1, concurrency=8)
    finally:
        await server.close()
    gaps = app[SEEN].gaps()
    assert len(gaps) == len(PAGES)
    assert min(gaps) >= 0.3  # max(delay, Crawl-delay), from the end of each response


async def test_one_request_at_a_time_per_host_with_the_delay_from_the_response_end(
    db_url: str,
) -> None:
    app = chain_site()
    server = await serve(app)
    try:
        await crawl(db_url, [str(server.make_url("/"))], delay=0.15, concurrency=8)
    finally:
        await server.close()
    timeline = app[SEEN].requests
    gaps = app[SEEN].gaps(skip_robots=False)
    assert len(timeline) == len(PAGES) + 2
    assert min(gaps) >= 0.15  # never overlapping, never sooner than the delay


async def test_two_hosts_are_crawled_side_by_side(db_url: str) -> None:
    first, second = chain_site(serve_seconds=0.1), chain_site(serve_seconds=0.1)
    server_a = await serve(first, host="127.0.0.1")
    server_b = await serve(second, host="127.0.0.2")
    try:
        await crawl(
            db_url,
            [str(server_a.make_url("/")), str(server_b.make_url("/"))],
            delay=0.1,
            allowed_domains=("127.0.0.1", "127.0.0.2"),
        )
    finally:
        await server_a.close()
        await server_b.close()
    a, b = first[SEEN].requests, second[SEEN].requests
    overlaps = sum(1 for ra in a for rb in b if ra[1] < rb[2] and rb[1] < ra[2])
    assert overlaps > 0  # hosts do not wait for each other


async def test_429_with_retry_after_slows_the_host_and_the_page_is_fetched_later(
    db_url: str,
) -> None:
    answers = iter([429, 429])

    async def limited(_request: web.Request) -> web.Response:
        status = next(answers, 200)
        headers = {"Retry-After": "1"} if status == 429 else None
        return web.Response(text=links(), status=status, content_type="text/html", headers=headers)

    app = site({"/": html(links("/limited")), "/limited": limited})
    async with serving(app) as base:
        await crawl(db_url, [base], max_retries=3)
    hits = [r for r in app[SEEN].requests if r[0] == "/limited"]
    assert len(hits) == 3
    assert hits[1][1] - hits[0][2] >= 1.0
    assert hits[2][1] - hits[1][2] >= 1.0
    page = (await collection(db_url))[base + "limited"]
    assert (page.status, page.error, page.fetch_count) == (200, None, 1)


async def test_503_storm_without_retry_after_backs_off_then_gives_up(db_url: str) -> None:
    app = site({"/": html(links("/down")), "/down": html("busy", status=503)})
    async with serving(app) as base:
        await crawl(db_url, [base], delay=0.05, max_retries=2)
    hits = [r for r in app[SEEN].requests if r[0] == "/down"]
    assert len(hits) == 3  # the first try and two retries
    gaps = [b[1] - a[2] for a, b in itertools.pairwise(hits)]
    assert gaps[1] > gaps[0] >= 0.1  # the backoff doubles each time
    page = (await collection(db_url))[base + "down"]
    assert (page.status, page.error) == (503, "http_error")


async def test_a_redirect_waiting_for_its_targets_turn_frees_its_place_to_fetch(
    db_url: str,
) -> None:
    """With one place to fetch, a redirect to a host with a long Crawl-delay waits for
    that host's turn without holding the place: the first host's pages are fetched
    meanwhile, and still never two requests at once."""
    target = site({"/landing": html(links())}, robots="User-agent: *\nCrawl-delay: 1.5\n")
    async with serving(target) as target_base:
        origin = site(
            {
                "/": html(links("/moved", *PAGES)),
                "/moved": redirect(target_base + "landing"),
                **{path: html(links()) for path in PAGES},
            }
        )
        async with serving(origin) as base:
            # breadth-first takes the root's links in order: /moved first
            await crawl(db_url, [base], policy="bfs", concurrency=1, delay=0.1)
    asked = origin[SEEN].requests
    redirected = next(r for r in asked if r[0] == "/moved")
    landed = next(r for r in target[SEEN].requests if r[0] == "/landing")
    assert landed[1] - redirected[2] >= 1.5  # the target's Crawl-delay was kept
    meanwhile = [r for r in asked if redirected[2] < r[1] < landed[1]]
    assert len(meanwhile) >= 3  # every 0.1 s or so
    everything = sorted(asked + target[SEEN].requests, key=lambda r: r[1])
    assert all(later[1] >= earlier[2] for earlier, later in itertools.pairwise(everything))
    pages = await collection(db_url)
    assert pages[base + "moved"].final_url == target_base + "landing"
    assert all(pages[base + path[1:]].error is None for path in PAGES)


async def test_visits_starting_together_ask_for_a_hosts_robots_txt_once(db_url: str) -> None:
    """Eight requests a host at once and a slow robots.txt: the visits that start while
    it is being asked for wait for its answer instead of each asking it again."""

    async def slow_robots(_request: web.Request) -> web.Response:
        await asyncio.sleep(0.3)
        return web.Response(text="User-agent: *\nDisallow: /private\n", content_type="text/plain")

    pages = {f"/{i}": html(links()) for i in range(12)}
    app = site({"/robots.txt": slow_robots, "/private": html(links()), **pages})
    async with serving(app) as base:
        seeds = [base + str(i) for i in range(12)] + [base + "private"]
        summary = await crawl(db_url, seeds, per_host_concurrency=8, concurrency=16, max_pages=20)
    seen = app[SEEN].paths()
    assert seen.count("/robots.txt") == 1
    assert "/private" not in seen  # every visit obeyed the one answer
    assert sorted(seen.count(f"/{i}") for i in range(12)) == [1] * 12
    assert summary.stop_reason == "frontier exhausted"


async def test_a_new_hosts_page_waits_for_its_turn_in_the_frontier_not_in_a_visit(
    db_url: str,
) -> None:
    """A new host's first turn goes to its robots.txt; its page waits for the next turn
    as a queued URL, holding nothing: with one place to fetch, the other hosts' robots.txt
    are asked meanwhile, instead of a visit or two waiting out each host's delay."""
    apps = [site({"/": html(links())}) for _ in range(20)]
    async with contextlib.AsyncExitStack() as stack:
        bases = [await stack.enter_async_context(serving(app)) for app in apps]
        summary = await crawl(db_url, bases, concurrency=1, delay=0.5)
    assert summary.stop_reason == "frontier exhausted"
    requests = sorted(
        (arrival, end, index, path)
        for index, app in enumerate(apps)
        for path, arrival, end in app[SEEN].requests
    )
    assert len(requests) == 40  # robots.txt and the page, once each
    first = requests[0][2]
    for index in range(len(apps)):
        robots, page = [(a, e) for a, e, i, _ in requests if i == index]
        assert page[0] - robots[1] >= 0.5  # the host's delay, kept
        asked_meanwhile = {i for a, _, i, _ in requests if robots[1] < a < page[0]}
        if index == first:  # the first host's delay: every other host was asked meanwhile
            assert asked_meanwhile == set(range(len(apps))) - {first}


async def test_the_dispatcher_wakes_at_a_parked_hosts_turn(db_url: str) -> None:
    """A host found not ready is parked and woken at its time: the next request comes
    after the delay, not at the dispatcher's longest sleep (a second) when nothing else
    happens meanwhile."""
    app = chain_site()
    async with serving(app) as base:
        await crawl(db_url, [base], delay=0.2, concurrency=1)
    gaps = app[SEEN].gaps(skip_robots=False)
    assert len(gaps) == len(PAGES) + 1  # robots.txt, the root and its six pages
    assert all(0.2 <= gap < 0.7 for gap in gaps)
