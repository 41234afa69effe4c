"""Pages analysed by worker processes: the same crawl, the same scores as one processor."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

from prometheus_client import CollectorRegistry
from yarl import URL

from crawler.net.fetcher import Response
from crawler.net.urls import Scope
from crawler.net.visit import Visit
from crawler.outcomes import Outcome
from crawler.pipeline.analysis_pool import AnalysisPool
from crawler.pipeline.processor import Processor
from policies import Candidate, TopicScorer
from testbed.server import Testbed
from testbed.web import TOPIC, TestbedWeb, WebSpec
from tests.crawler.helpers import collection, crawl, reachable


async def test_a_crawl_with_worker_processes_stores_every_page_once(db_url: str) -> None:
    registry = CollectorRegistry()
    async with Testbed(WebSpec(pages=400, hosts=3, seed=3)) as bed:
        summary = await crawl(
            db_url,
            bed.seeds,
            allowed_domains=tuple(bed.hostnames),
            concurrency=8,
            processors=2,
            registry=registry,
        )
        served = list(bed.requests)
    pages = await collection(db_url)
    assert summary.stop_reason == "frontier exhausted"
    covered = {p.final_url or p.url for p in pages.values()}
    assert [page for page in reachable(bed) if bed.page_url(page) not in covered] == []
    asked = Counter((r.host, r.path) for r in served)
    assert [request for request, times in asked.items() if times > 1] == []
    analysed = registry.get_sample_value("crawler_pages_analysed_total", {"where": "workers"})
    scored = sum(1 for p in pages.values() if p.relevance is not None)
    assert analysed is not None
    assert analysed >= scored > 300
    assert (
        registry.get_sample_value("crawler_pages_analysed_total", {"where": "event_loop"}) is None
    )


def _visits(pages: int) -> list[Visit]:
    web = TestbedWeb(WebSpec(pages=pages, hosts=2, seed=4))
    base = "http://127.0.0.1:8000"
    visits = []
    for page in range(pages):
        url = f"{base}/p/{page}"
        body = web.render(page, lambda p: f"{base}/p/{p}", lambda s, t: f"{base}/r/{t}")
        response = Response(
            URL(url), 200, "text/html", "utf-8", None, None, None, body.encode(), False, len(body)
        )
        candidate = Candidate(page + 1, url, "127.0.0.1", 1, 0.5)
        visits.append(Visit(candidate, Outcome.OK, url, response, fetched_at=datetime.now(UTC)))
    return visits


async def test_pages_analysed_in_workers_score_as_on_the_event_loop() -> None:
    """The workers count terms only: scored in the same order, the learned state (IDF,
    feedback) and every score and link estimate are those of one processor."""
    visits = _visits(120)

    def processor() -> Processor:
        scope = Scope.of({"127.0.0.1"}, None)
        scorer = TopicScorer().fit([TOPIC])
        return Processor(scorer=scorer, scope=scope, store_text=True, relevance_threshold=0.1)

    here, there = processor(), processor()
    scores = set()
    pool = AnalysisPool(2, there.scorer.counter_.hasher)
    try:
        for visit in visits:
            inline = here.process(visit)
            job = there.analysis_job(visit)
            assert job is not None
            pooled = there.finish(visit, await pool.analyze(job))
            pool.remember(link.url for link in pooled.write.links)  # as the crawl does
            assert pooled.relevance == inline.relevance
            assert pooled.write.links == inline.write.links  # URLs, depths, estimates
            assert pooled.write.record == inline.write.record
            scores.add(inline.relevance)
    finally:
        pool.close()
    assert here.scorer.get_state() == there.scorer.get_state()
    assert len(scores) > 30  # pages that score differently, links estimated differently


async def test_a_worker_leaves_out_the_links_the_crawl_has_made_known() -> None:
    """A worker is told the links handed to storage since its last page, and reads and
    counts none of them again."""
    visit = _visits(40)[2]
    scorer = TopicScorer().fit([TOPIC])
    job = Processor(
        scorer=scorer,
        scope=Scope.of({"127.0.0.1"}, None),
        store_text=True,
        relevance_threshold=0.1,
    ).analysis_job(visit)
    assert job is not None
    pool = AnalysisPool(1, scorer.counter_.hasher)
    try:
        first = await pool.analyze(job)
        again = await pool.analyze(job)
        pool.remember([first.links[0].url])
        after_one = await pool.analyze(job)
        pool.remember(link.url for link in first.links)
        after_all = await pool.analyze(job)
    finally:
        pool.close()
    assert len(first.links) >= 3
    assert again.links == first.links  # nothing remembered: nothing left out
    assert after_one.links == first.links[1:]
    assert after_one.known == 1
    assert after_all.links == ()
    assert after_all.known == len(first.links)
    assert after_all.counts.rows == 1  # the page alone


def test_a_worker_spawned_from_the_crawler_command_loads_neither_scipy_nor_scikit_learn(
    tmp_path: Path,
) -> None:
    """A spawned worker imports its parent's main script: the `crawler` script, which
    imports `crawler.cli`. What the worker holds then is what it loaded."""
    script = tmp_path / "crawler_command.py"
    script.write_text(
        textwrap.dedent(
            """
            from crawler.cli import main  # as the installed `crawler` script begins

            if __name__ == "__main__":
                from crawler.pipeline.analysis_pool import AnalysisPool
                from policies.terms import TermHasher

                pool = AnalysisPool(1, TermHasher())
                names = "sorted(m for m in ('scipy', 'sklearn') if m in __import__('sys').modules)"
                print(pool._executors[0].submit(eval, names).result())
                pool.close()
            """
        )
    )
    run = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, check=True, timeout=60
    )
    assert run.stdout.strip() == "[]"
