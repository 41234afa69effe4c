"""The sections of a host in a live crawl of a real server on loopback: once the pages
fetched show that a host's sections tell its pages apart, the Q-learning frontier
crawls the part of the site whose one link promises nothing more than the others, where
best-first takes every other link first; while they do not, it orders as best-first."""

from __future__ import annotations

from pathlib import Path

import pytest
from aiohttp import web

from policies.frontier.qlearning.exploration_budget import ExplorationBudget
from tests.crawler.helpers import SEEN, crawl, html, links, serving, site

# the untried section's optimism counts from the warmup's end (`ExplorationBudget`)
WARMUP = ExplorationBudget().warmup
PAGES = WARMUP + 30  # of each of two sections, linked alike, one on the topic and one not
GUIDES = 10
BUDGET = WARMUP + 60  # the front page and the next: best-first never reaches the third section
# A page's links reach the frontier at its transaction's commit, tens of milliseconds
# and more after its fetch; on loopback without a delay a slow commit lets dozens of
# pages be chosen without them. The delay keeps that lag to a few pages, so the order
# measured is the policy's.
DELAY = 0.03


def docs_site(*, guides_on_topic: bool) -> web.Application:
    """A front page linking alike, in turn, to `PAGES` API pages and as many guides, and,
    last, to a development section whose pages are on the topic; no link of the front
    page names it. With `guides_on_topic` the guides are on the topic as well, and the sections of
    the site tell its pages apart where their links do not. The sections' names are
    single letters, which no link's words hold (`policies.frontier.qlearning.link_model`
    drops words of one letter): the link model cannot tell the sections' links apart,
    only their values."""
    api = [f"/a/{i}" for i in range(PAGES)]
    guides = [f"/b/{i}" for i in range(PAGES)]
    alternate = [href for pair in zip(api, guides, strict=True) for href in pair]
    anchors = "".join(f'<a href="{href}">widget reference</a>' for href in alternate)
    home = (
        "<html><head><title>widgets</title></head><body><p>widgets documentation</p>"
        f'{anchors}<a href="/d/">development</a></body></html>'
    )
    routes = {"/": html(home)}
    for href in api:
        routes[href] = html(links(words="widget reference manual"))
    guide_words = "solar energy panels on roofs" if guides_on_topic else "widget user guide"
    for href in guides:
        routes[href] = html(links(words=guide_words))
    dev = [f"/d/{i}" for i in range(GUIDES)]
    routes["/d/"] = html(links(*dev, words="solar energy guides"))
    for href in dev:
        routes[href] = html(links(words="solar energy panels on roofs"))
    return site(routes)


async def crawl_docs(tmp_path: Path, policy: str, *, guides_on_topic: bool = True) -> list[str]:
    """The paths the server was asked for in a crawl of `BUDGET` pages."""
    app = docs_site(guides_on_topic=guides_on_topic)
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


@pytest.mark.slow
async def test_qlearning_crawls_the_section_no_link_promises(tmp_path: Path) -> None:
    paths = await crawl_docs(tmp_path, "qlearning")
    # the guides' pages earned what the API's did not, their links alike: the sections'
    # values weigh in, the guides go first and then the untried section's optimism
    # outranks what the API's tries left of theirs
    assert paths.count("/d/") == 1, paths
    guides = [path for path in paths if path.startswith("/b/")]
    api = [path for path in paths if path.startswith("/a/")]
    assert len(guides) == PAGES > len(api), paths
    # once there, the development pages' links name the topic: they come next, each once
    dev = [path for path in paths if path.startswith("/d/") and path != "/d/"]
    assert len(dev) == len(set(dev)) == GUIDES, paths


@pytest.mark.slow
async def test_best_first_takes_the_other_links_first(tmp_path: Path) -> None:
    paths = await crawl_docs(tmp_path, "best-first")
    assert not [path for path in paths if path.startswith("/d/")]
    assert sum(path.startswith(("/a/", "/b/")) for path in paths) == BUDGET - 1


@pytest.mark.slow
async def test_qlearning_orders_as_best_first_while_no_section_tells_pages_apart(
    tmp_path: Path,
) -> None:
    paths = await crawl_docs(tmp_path, "qlearning", guides_on_topic=False)
    assert not [path for path in paths if path.startswith("/d/")]
    assert sum(path.startswith(("/a/", "/b/")) for path in paths) == BUDGET - 1
