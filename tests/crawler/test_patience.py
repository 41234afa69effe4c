"""The frontier's patience in live crawls of two real servers on loopback: with it, a
slot stays idle while the host of far better URLs is busy, instead of fetching the
other host's; the wait ends when those URLs run out."""

from __future__ import annotations

import asyncio
from pathlib import Path

from aiohttp import web
from prometheus_client import CollectorRegistry

from tests.crawler.helpers import SEEN, crawl, html, links, serving, site

BUDGET = 20


def slow(handler):
    """The page after a pause: its host stays busy while the other's would be ready."""

    async def answer(request: web.Request) -> web.StreamResponse:
        await asyncio.sleep(0.03)
        return await handler(request)

    return answer


def topic_site(pages: int, other: str):
    home = links(*(f"/t{i}" for i in range(pages)), words="solar energy panels")
    home = home.replace("</body>", f'<a href="{other}">pasta recipes</a></body>')
    routes = {"/": html(home)}
    for i in range(pages):
        routes[f"/t{i}"] = slow(html(links(words="solar energy panels on roofs")))
    return site(routes)


def other_site(pages: int):
    routes = {"/": html(links(*(f"/p{i}" for i in range(pages)), words="pasta recipes"))}
    for i in range(pages):
        routes[f"/p{i}"] = html(links(words="pasta recipes with tomatoes"))
    return site(routes)


async def crawl_two_hosts(
    tmp_path: Path, patience: float, topic_pages: int
) -> tuple[web.Application, web.Application, float]:
    """Crawl from the topic host's front page, which links to its topic pages and to
    the other host; the servers' apps (what they saw) and the dispatcher's waits."""
    registry = CollectorRegistry()
    other = other_site(40)
    async with serving(other, "127.0.0.2") as other_url:
        topic = topic_site(topic_pages, other_url)
        async with serving(topic, "127.0.0.1") as topic_url:
            summary = await crawl(
                f"sqlite+aiosqlite:///{tmp_path / f'patience-{patience}.db'}",
                [topic_url],
                registry=registry,
                policy="best-first",
                patience=patience,
                allowed_domains=("127.0.0.1", "127.0.0.2"),
                max_pages=BUDGET,
                concurrency=2,
                per_host_concurrency=1,
                processors=1,
            )
    assert summary.fetched == BUDGET  # waiting never stalls the crawl
    waits = registry.get_sample_value("crawler_focus_waits_total") or 0.0
    return topic, other, waits


async def test_a_patient_frontier_waits_for_the_busy_host_of_the_better_urls(
    tmp_path: Path,
) -> None:
    topic, other, waits = await crawl_two_hosts(tmp_path, 0.5, topic_pages=30)
    assert other[SEEN].paths() == []  # not even its robots.txt within the budget
    assert sorted(set(topic[SEEN].paths()) - {"/", "/robots.txt"}) == sorted(
        f"/t{i}" for i in range(BUDGET - 1)
    )
    assert 0 < waits <= 10 * BUDGET  # each wait sleeps until a wake-up: no busy loop


async def test_without_patience_the_other_host_fills_the_idle_slot(tmp_path: Path) -> None:
    _, other, waits = await crawl_two_hosts(tmp_path, 0.0, topic_pages=30)
    assert sum(1 for path in other[SEEN].paths() if path.startswith("/p")) >= 5
    assert waits == 0


async def test_the_wait_ends_when_the_better_urls_run_out(tmp_path: Path) -> None:
    topic, other, _ = await crawl_two_hosts(tmp_path, 0.5, topic_pages=5)
    topic_requests = [arrived for path, arrived, _ in topic[SEEN].requests if path != "/robots.txt"]
    other_pages = [arrived for path, arrived, _ in other[SEEN].requests if path.startswith("/p")]
    assert len(topic_requests) == 6  # the front page and its five topic pages, each once
    assert len(other_pages) == BUDGET - 7  # the rest of the budget, the other's front page aside
    # the other host's pages came after the last topic page was asked for
    assert min(other_pages) > max(topic_requests)
