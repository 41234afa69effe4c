"""Steering a running daemon through its API: pause, resume, seeds added."""

from __future__ import annotations

import asyncio

from aiohttp import web

from tests.crawler.helpers import SEEN, html, serving, site
from tests.crawler.web.daemon import WAIT, Daemon, chain, running_daemon, wait_for

ROUTES = {
    "/": html('<html><head><title>Start</title></head><body><a href="/chain/0">go</a></body>'),
    "/chain/{n}": chain(),
}


def fetched(daemon: Daemon) -> int:
    """Pages the site was asked for, robots.txt aside."""
    return sum(path != "/robots.txt" for path in daemon.seen.paths())


async def test_pause_stops_dispatch_once_in_flight_visits_end_and_resume_goes_on(
    db_url: str,
) -> None:
    async with running_daemon(db_url, ROUTES) as daemon:

        async def some_fetched() -> bool:
            return fetched(daemon) >= 5

        await wait_for(some_fetched, "five pages fetched")
        code, body = await daemon.call("POST", "/api/v1/pause")
        assert (code, body["state"]) == (200, "paused")

        async def settled() -> bool:
            return (await daemon.status())["in_flight"] == 0

        await wait_for(settled, "done with the visits in flight")
        during = fetched(daemon)
        await asyncio.sleep(0.3)  # dozens of pages' time at this site's pace
        assert fetched(daemon) == during
        assert (await daemon.status())["state"] == "paused"

        code, body = await daemon.call("POST", "/api/v1/resume")
        assert (code, body["state"]) == (200, "running")

        async def going_on() -> bool:
            return fetched(daemon) >= during + 5

        await wait_for(going_on, "fetching again")


async def test_a_paused_daemon_with_nothing_left_waits_instead_of_ending(db_url: str) -> None:
    arrived = asyncio.Event()

    async def slow(_request: web.Request) -> web.Response:
        arrived.set()
        await asyncio.sleep(0.3)
        return web.Response(text="<title>Alone</title>nothing", content_type="text/html")

    async with running_daemon(db_url, {"/": slow}) as daemon:
        await asyncio.wait_for(arrived.wait(), WAIT)
        code, _ = await daemon.call("POST", "/api/v1/pause")
        assert code == 200

        async def stored() -> bool:
            return (await daemon.status())["pages"] == 1

        await wait_for(stored, "done with the seed")
        await asyncio.sleep(0.3)  # a crawl with nothing left would have ended by now
        status = await daemon.status()
        assert (status["state"], status["frontier"], status["in_flight"]) == ("paused", 0, 0)


async def test_seeds_added_are_queued_at_once_and_fetched(db_url: str) -> None:
    other = site({"/new": html("<html><head><title>New</title></head><body>x</body></html>")})
    async with serving(other) as other_base, running_daemon(db_url, ROUTES) as daemon:
        # hosts compare without their ports: the other server is in the crawl's scope
        url = other_base + "new"
        code, body = await daemon.call("POST", "/api/v1/seeds", json={"urls": [url, url]})
        assert code == 200, body
        assert body == {"queued": [url], "known": [url]}

        async def asked() -> bool:
            return "/new" in other[SEEN].paths()

        await wait_for(asked, "fetched the seed added")
        assert other[SEEN].paths().count("/new") == 1
        code, body = await daemon.call("POST", "/api/v1/seeds", json={"urls": [url]})
        assert (code, body) == (200, {"queued": [], "known": [url]})


async def test_seeds_are_checked_each_bad_one_named_and_none_queued(db_url: str) -> None:
    async with running_daemon(db_url, ROUTES) as daemon:
        good = daemon.base + "chain/1000"
        urls = [good, "not a url", "ftp://127.0.0.1/file", "http://elsewhere.example/"]
        code, body = await daemon.call("POST", "/api/v1/seeds", json={"urls": urls})
        assert code == 400
        named = {problem["url"] for problem in body["invalid"]}
        assert named == set(urls[1:])
        assert "scope" in body["invalid"][-1]["reason"]
        assert "/chain/1000" not in daemon.seen.paths()
