"""The Q-learning frontier in live crawls of the testbed: it finds more, and a resumed
crawl keeps what it learned."""

from __future__ import annotations

import json
from pathlib import Path

import storage
from crawler.testbed import Testbed
from crawler.testbed_web import WebSpec
from tests.crawler.helpers import crawl
from tests.crawler.test_crawl_testbed import harvest

STATE = "frontier.qlearning"


async def test_qlearning_keeps_up_with_best_first_while_it_learns(tmp_path: Path) -> None:
    # bench/focus.py measures it passing best-first over longer crawls; within 2,500
    # pages, learning costs it early on what it gains later
    budget = 2500
    best = await harvest(f"sqlite+aiosqlite:///{tmp_path / 'best.db'}", "best-first", budget)
    learned = await harvest(f"sqlite+aiosqlite:///{tmp_path / 'q.db'}", "qlearning", budget)
    assert learned >= 0.95 * best, (learned, best)


async def saved_state(db_url: str) -> dict:
    engine = storage.open_engine(db_url)
    try:
        async with engine.connect() as connection:
            blob = await storage.load_learned_state(connection, STATE)
    finally:
        await engine.dispose()
    assert blob is not None
    return json.loads(blob)


async def test_a_resumed_crawl_keeps_what_the_frontier_learned(db_url: str) -> None:
    async with Testbed(WebSpec(pages=3000, hosts=3, seed=6)) as bed:
        options = {"allowed_domains": tuple(bed.hostnames), "policy": "qlearning"}
        first = await crawl(db_url, bed.seeds, max_pages=300, **options)
        state = await saved_state(db_url)
        # one update a page fetched (re-visits aside), all of them saved at the end
        assert state["model"]["updates"] == first.fetched
        assert sum(pages for _, pages in state["harvest"].values()) == first.fetched
        second = await crawl(db_url, bed.seeds, max_pages=300, **options)
        resumed = await saved_state(db_url)
    assert second.fetched > 250
    assert resumed["model"]["updates"] == first.fetched + second.fetched
    learned_before = sum(state["observations"])
    assert sum(resumed["observations"]) > learned_before
