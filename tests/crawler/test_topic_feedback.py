"""`topic_feedback`: how much the relevant pages' words weigh beside the topic's when a
crawl estimates its links (Rocchio feedback), set for `crawler run` and for the
experiments' crawls alike."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from bench.harness import CrawlSettings, TruthWeb, crawl_order
from testbed.server import Testbed
from testbed.web import WebSpec
from tests.crawler.helpers import crawl


async def link_estimates(
    tmp_path: Path, bed: Testbed, weight: float, route: str
) -> dict[str, float]:
    """The estimates of the links a breadth-first crawl of 300 pages found and left."""
    scratch = tmp_path / f"{route}-{weight}"
    scratch.mkdir()
    if route == "run":
        path = scratch / "crawl.db"
        await crawl(
            f"sqlite+aiosqlite:///{path}",
            bed.seeds,
            allowed_domains=tuple(bed.hostnames),
            policy="bfs",
            topic_feedback=weight,
            max_pages=300,
        )
    else:
        truth = {bed.page_url(page): float(bed.web.relevance[page]) for page in range(2000)}
        web = TruthWeb(tuple(bed.seeds), bed.topic, truth, threshold=0.4)
        await crawl_order(web, "bfs", CrawlSettings(300, topic_feedback=weight), scratch)
        path = scratch / "bfs.db"
    with sqlite3.connect(path) as db:
        return dict(db.execute("SELECT url, score FROM urls WHERE fetched_at IS NULL"))


@pytest.mark.slow
@pytest.mark.parametrize("route", ["run", "experiment"])
async def test_the_relevant_pages_words_raise_the_links_they_share(
    tmp_path: Path, route: str
) -> None:
    """With the relevant pages' words weighed in, a link whose words are theirs but not
    the topic's is estimated higher; with a weight of 0 only the topic's words count.
    (The topic's own words weigh less in the widened topic, so a few links fall.)"""
    async with Testbed(WebSpec(pages=2000, seed=3)) as bed:
        alone = await link_estimates(tmp_path, bed, 0.0, route)
        widened = await link_estimates(tmp_path, bed, 2.0, route)
    both = alone.keys() & widened.keys()
    assert len(both) > 500
    raised = [url for url in both if widened[url] > alone[url]]
    assert len(raised) > 0.75 * len(both)
    assert sum(widened[url] for url in both) > 2 * sum(alone[url] for url in both)
