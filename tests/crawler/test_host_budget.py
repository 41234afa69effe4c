"""The per-host budget: at most `max_pages_per_host` pages fetched from one host,
robots.txt and redirects not counted, counted again from the database on a resume."""

from __future__ import annotations

import asyncio
from pathlib import Path

from aiohttp import web

from crawler.frontier.host_budget import HostBudget
from tests.crawler.helpers import SEEN, Handler, crawl, html, links, serving, site


def _pages(count: int, *, extra: dict[str, Handler] | None = None) -> web.Application:
    """A site whose home links to /p0 ... /p{count-1}, each linking to all the others."""
    hrefs = [f"/p{n}" for n in range(count)]
    routes: dict[str, Handler] = {"/": html(links(*hrefs, "/r"))}
    routes.update({href: html(links(*hrefs)) for href in hrefs})
    routes.update(extra or {})
    return site(routes)


def _page_requests(app: web.Application) -> list[str]:
    return [path for path in app[SEEN].paths() if path != "/robots.txt"]


def test_a_budget_closes_a_host_at_its_limit_and_reopens_it_when_a_page_is_given_back() -> None:
    budget = HostBudget(2, {"a": 1})
    assert budget.allows("a")
    assert budget.allows("b")
    assert budget.take("a")  # its second page: closed
    assert not budget.allows("a")
    assert budget.give_back("a")  # no page after all: open again
    assert budget.allows("a")
    assert not budget.take("b")
    assert HostBudget(None).allows("a")
    assert not HostBudget(None).take("a")


async def test_each_host_is_asked_for_its_budget_of_pages_and_the_crawl_ends(
    tmp_path: Path,
) -> None:
    one = _pages(8, extra={"/r": html("", status=302, headers={"Location": "/p7"})})
    two = _pages(8)
    async with serving(one, "127.0.0.1") as first, serving(two, "127.0.0.2") as second:
        summary = await crawl(
            str(tmp_path / "c.db"),
            [first, second],
            max_pages_per_host=4,
            allowed_domains=("127.0.0.1", "127.0.0.2"),
        )
        assert summary.why_stopped == "frontier exhausted"
        assert len(_page_requests(two)) == 4
        asked = _page_requests(one)
        # a redirect is not a page: /r and /p7, had the crawl asked for /r, count as one
        assert len([path for path in asked if path != "/r"]) == 4
        assert app_robots(one) == app_robots(two) == 1

        # a resumed crawl counts the pages fetched already, and asks for the rest
        await crawl(
            str(tmp_path / "c.db"),
            [first, second],
            max_pages_per_host=6,
            allowed_domains=("127.0.0.1", "127.0.0.2"),
        )
        assert len(_page_requests(two)) == 6
        assert len(set(_page_requests(two))) == 6  # none asked twice


def app_robots(app: web.Application) -> int:
    return app[SEEN].paths().count("/robots.txt")


async def test_urls_refused_by_robots_txt_do_not_spend_the_budget(tmp_path: Path) -> None:
    hrefs = [f"/private/{n}" for n in range(5)] + [f"/p{n}" for n in range(5)]
    routes: dict[str, Handler] = {"/": html(links(*hrefs))}
    routes.update({href: html(links()) for href in hrefs})
    app = site(routes, robots="User-agent: *\nDisallow: /private/\n")
    async with serving(app) as base:
        await crawl(str(tmp_path / "c.db"), [base], max_pages_per_host=4)
    asked = _page_requests(app)
    assert len(asked) == 4
    assert not any(path.startswith("/private/") for path in asked)


async def test_a_shared_crawl_ends_when_only_hosts_at_their_budget_have_urls(
    postgres_url: str,
) -> None:
    """On PostgreSQL the crawl's end is asked of the database (any URL queued on any
    daemon's hosts): the URLs left queued on a host at its budget are no work."""
    app = _pages(8)
    async with serving(app, "127.0.0.2") as base:
        summary = await asyncio.wait_for(
            crawl(
                postgres_url,
                [base],
                max_pages_per_host=3,
                allowed_domains=("127.0.0.2",),
                lease_seconds=2,
                daemon_id="only",
            ),
            60,
        )
    assert summary.why_stopped == "frontier exhausted"
    assert len(_page_requests(app)) == 3
