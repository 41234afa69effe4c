"""The sections of a host in a live crawl of a real server on loopback: the Q-learning
frontier crawls the part of a site whose one link promises nothing more than the
others, where best-first takes every other link first."""

from __future__ import annotations

from pathlib import Path

from aiohttp import web

from tests.crawler.helpers import SEEN, crawl, html, links, serving, site

API_PAGES = 90
GUIDES = 10
BUDGET = 70  # the front page and 69 API pages: best-first never reaches the section
# A page's links reach the frontier at its transaction's commit, tens of milliseconds
# and more after its fetch; on loopback without a delay a slow commit lets dozens of
# pages be chosen without them. The delay keeps that lag to a few pages, so the order
# measured is the policy's.
DELAY = 0.03


def docs_site() -> web.Application:
    """A front page linking to 90 API pages and, last, to a development section whose
    guides are the pages on the topic; no link of the front page names it."""
    api = [f"/api/a{i}" for i in range(API_PAGES)]
    anchors = "".join(f'<a href="{href}">widget reference</a>' for href in api)
    home = (
        "<html><head><title>widgets</title></head><body><p>widgets documentation</p>"
        f'{anchors}<a href="/dev/">development</a></body></html>'
    )
    routes = {"/": html(home)}
    for href in api:
        routes[href] = html(links(words="widget reference manual"))
    guides = [f"/dev/t{i}" for i in range(GUIDES)]
    routes["/dev/"] = html(links(*guides, words="solar energy guides"))
    for href in guides:
        routes[href] = html(links(words="solar energy panels on roofs"))
    return site(routes)


async def crawl_docs(tmp_path: Path, policy: str) -> list[str]:
    """The paths the server was asked for in a crawl of `BUDGET` pages."""
    app = docs_site()
    async with serving(app) as url:
        summary = await crawl(
            f"sqlite+aiosqlite:///{tmp_path / f'{policy}.db'}",
            [url],
            policy=policy,
            max_pages=BUDGET,
            delay=DELAY,
            concurrency=1,
            per_host_concurrency=1,
            processors=1,
        )
    assert summary.fetched == BUDGET
    return app[SEEN].paths()


async def test_qlearning_crawls_the_section_no_link_promises(tmp_path: Path) -> None:
    paths = await crawl_docs(tmp_path, "qlearning")
    # after the model's first batch (16 fetches) the API links are re-ranked with what
    # their section's tries left of its optimism, below the untried section's
    assert paths.count("/dev/") == 1, paths
    assert paths.index("/dev/") <= 16 + 8, paths  # robots.txt, the front page, the lag
    # once there, the guides' links name the topic: they come next, each once
    guides = [path for path in paths if path.startswith("/dev/t")]
    assert len(guides) == len(set(guides)) == GUIDES, paths


async def test_best_first_takes_the_other_links_first(tmp_path: Path) -> None:
    paths = await crawl_docs(tmp_path, "best-first")
    assert not [path for path in paths if path.startswith("/dev")]
    assert sum(path.startswith("/api/") for path in paths) == BUDGET - 1
