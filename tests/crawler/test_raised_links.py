"""A URL first found on an off-topic page, and then on a relevant one, ranks as the
relevant page's link would at least: a live crawl of a loopback server, its requests
counted there."""

from __future__ import annotations

from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry

from tests.crawler.helpers import SEEN, crawl, html, serving, site

FILLERS = 80  # off-topic pages the front page links to before the hidden one


def page(words: str, *links: tuple[str, str]) -> str:
    anchors = "".join(f'<p><a href="{href}">{anchor}</a></p>' for href, anchor in links)
    return f"<html><head><title>{words}</title></head><body><p>{words}</p>{anchors}</body></html>"


def front_and_guide_site():
    fillers = [(f"/f{i}", "pasta recipes") for i in range(FILLERS)]
    routes = {
        # off-topic: the hidden page's link names nothing of the topic either, and comes
        # after the fillers'
        "/": html(page("welcome to our kitchen", *fillers, ("/hidden", "more"))),
        # the second seed, relevant: its one link is to the hidden page, known by then
        "/guide": html(page("solar energy panels on roofs", ("/hidden", "more"))),
        "/hidden": html(page("solar energy panels and batteries")),
    }
    for href, _ in fillers:
        routes[href] = html(page("pasta recipes with tomatoes"))
    return site(routes)


@pytest.mark.parametrize("policy", ["best-first", "qlearning"])
async def test_a_known_link_on_a_relevant_page_comes_before_the_off_topic_ones(
    tmp_path: Path, policy: str
) -> None:
    app = front_and_guide_site()
    registry = CollectorRegistry()
    async with serving(app) as url:
        await crawl(
            f"sqlite+aiosqlite:///{tmp_path / 'crawl.db'}",
            [url, f"{url}guide"],
            policy=policy,
            registry=registry,
            concurrency=1,  # the order is the policy's, not the fetches' timing
            per_host_concurrency=1,
        )
    paths = [path for path in app[SEEN].paths() if path != "/robots.txt"]
    assert sorted(paths) == sorted({"/", "/guide", "/hidden", *(f"/f{i}" for i in range(FILLERS))})
    assert paths[:2] == ["/", "/guide"]
    # without the raise it would be last; the fetches go on while the guide's write is
    # committed (some ten small pages on loopback), so it comes a little after the guide
    assert paths.index("/hidden") < FILLERS // 2
    raised = registry.get_sample_value("crawler_links_raised_total")
    assert raised == 1
