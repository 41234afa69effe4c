"""Pages analysed by worker processes: the same crawl, the same scores as one processor."""

from __future__ import annotations

import asyncio
import fcntl
import logging
import os
import pickle
import subprocess
import sys
import textwrap
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry
from yarl import URL

from crawler.fetch.fetcher import Response
from crawler.fetch.visit import Visit
from crawler.net.known_urls import KNOWN_URLS_MEMORY
from crawler.net.scope import Scope
from crawler.outcomes import Outcome
from crawler.process.analysis_pool import AnalysisJob, AnalysisPool
from crawler.process.analysis_worker import FRAME, PIPE_BYTES, frame
from crawler.process.processor import Processor
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
            inline_below=0,  # every page to a worker, however small
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
    assert registry.get_sample_value("crawler_pages_analysed_total", {"where": "event_loop"}) == 0


@pytest.mark.parametrize("cores", [1, 2])
async def test_by_default_a_crawl_has_a_worker_process_per_core(
    db_url: str, cores: int, caplog: pytest.LogCaptureFixture
) -> None:
    available = os.sched_getaffinity(0)
    if len(available) < cores:
        pytest.skip(f"this machine lets the tests use {len(available)} cores")
    registry = CollectorRegistry()
    os.sched_setaffinity(0, sorted(available)[:cores])  # this thread runs the crawl
    try:
        async with Testbed(WebSpec(pages=60, hosts=2, seed=3)) as bed:
            with caplog.at_level(logging.INFO, logger="crawler.service"):
                await crawl(
                    db_url,
                    bed.seeds,
                    allowed_domains=tuple(bed.hostnames),
                    inline_below=0,  # the testbed's pages are small
                    registry=registry,
                )
    finally:
        os.sched_setaffinity(0, available)
    (started,) = [r.getMessage() for r in caplog.records if "crawl started" in r.getMessage()]
    assert started.endswith(f"{cores} processors")
    analysed = {
        where: registry.get_sample_value("crawler_pages_analysed_total", {"where": where})
        for where in ("event_loop", "workers")
    }
    there, elsewhere = ("event_loop", "workers") if cores == 1 else ("workers", "event_loop")
    assert (analysed[there] or 0) > 10
    assert analysed[elsewhere] == 0


def _visits(pages: int) -> list[Visit]:
    web = TestbedWeb(WebSpec(pages=pages, hosts=2, seed=4))
    base, elsewhere = "http://127.0.0.1:8000", "http://127.0.0.9:8000"  # out of SCOPE
    visits = []
    for page in range(pages):
        url = f"{base}/p/{page}"
        body = web.render(
            page,
            lambda p: f"{elsewhere if p % 4 == 3 else base}/p/{p}",
            lambda s, t: f"{base}/r/{t}",
        )
        response = Response(
            URL(url), 200, "text/html", "utf-8", None, None, None, body.encode(), False, len(body)
        )
        candidate = Candidate(page + 1, url, "127.0.0.1", 1, 0.5)
        visits.append(Visit(candidate, Outcome.OK, url, response, fetched_at=datetime.now(UTC)))
    return visits


SCOPE = Scope.of({"127.0.0.1"}, None)
BOTH_HOSTS = Scope.of({"127.0.0.1", "127.0.0.9"}, None)


async def test_pages_analysed_in_workers_score_as_on_the_event_loop() -> None:
    """The workers count terms only: scored in the same order, the learned state (IDF,
    feedback) and every score and link estimate are those of one processor, and so are
    the links left out of scope."""
    visits = _visits(120)

    def processor() -> Processor:
        scorer = TopicScorer().fit([TOPIC])
        return Processor(scorer=scorer, scope=SCOPE, store_text=True, relevance_threshold=0.1)

    here, there = processor(), processor()
    scores = set()
    pool = await AnalysisPool.start(2, there.scorer.n_features, SCOPE)
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
        await pool.close()
    assert here.scorer.get_state() == there.scorer.get_state()
    assert len(scores) > 30  # pages that score differently, links estimated differently


async def test_a_page_larger_than_a_pipes_default_goes_to_a_worker_and_back_whole() -> None:
    """A page of 1.4 MB, with 3,000 links, analysed in a worker as on the event loop;
    the worker's pipes, each way, hold `PIPE_BYTES` (Linux's default is 64 KiB)."""
    links = "".join(
        f'<li><a href="/p/{n}">solar panel {n}</a> photovoltaic cells and inverters</li>'
        for n in range(3_000)
    )
    paragraphs = "<p>solar energy storage batteries for the grid at night</p>" * 20_000
    body = f"<html><head><title>Solar</title></head><body>{paragraphs}<ul>{links}</ul>"
    url = "http://127.0.0.1:8000/big"
    response = Response(
        URL(url), 200, "text/html", "utf-8", None, None, None, body.encode(), False, len(body)
    )
    visit = Visit(
        Candidate(1, url, "127.0.0.1", 1, 0.5), Outcome.OK, url, response,
        fetched_at=datetime.now(UTC),
    )  # fmt: skip

    def processor() -> Processor:
        scorer = TopicScorer().fit([TOPIC])
        return Processor(scorer=scorer, scope=SCOPE, store_text=True, relevance_threshold=0.1)

    here, there = processor(), processor()
    job = there.analysis_job(visit)
    assert job is not None
    assert len(job.body) > 1_000_000
    pool = await AnalysisPool.start(1, there.scorer.n_features, SCOPE)
    try:
        analysis = await pool.analyze(job)
        (worker,) = pool._workers
        assert worker.process.stdin is not None
        transports = [worker.process.stdin.transport, worker._answers._transport]  # type: ignore[attr-defined]
        sizes = [
            fcntl.fcntl(transport.get_extra_info("pipe").fileno(), fcntl.F_GETPIPE_SZ)
            for transport in transports
        ]
    finally:
        await pool.close()
    inline, pooled = here.process(visit), there.finish(visit, analysis)
    assert len(pooled.write.links) == 3_000
    assert pooled.write.links == inline.write.links
    assert pooled.write.record == inline.write.record
    if _largest_pipe() < PIPE_BYTES:
        pytest.skip("this system keeps pipes smaller than PIPE_BYTES")
    assert sizes == [PIPE_BYTES, PIPE_BYTES]


def _largest_pipe() -> int:
    """The most a pipe may hold on this system, for anyone (Linux's fs.pipe-max-size)."""
    return int(Path("/proc/sys/fs/pipe-max-size").read_text())


def _a_page_with_links() -> AnalysisJob:
    job = Processor(
        scorer=TopicScorer().fit([TOPIC]),
        scope=BOTH_HOSTS,
        store_text=True,
        relevance_threshold=0.1,
    ).analysis_job(_visits(40)[2])
    assert job is not None
    return job


async def test_a_worker_leaves_out_the_links_the_crawl_has_made_known() -> None:
    """A worker is told the links handed to storage since its last page, and reads and
    counts none of them again."""
    job = _a_page_with_links()
    pool = await AnalysisPool.start(1, TopicScorer().fit([TOPIC]).n_features, BOTH_HOSTS)
    try:
        first = await pool.analyze(job)
        again = await pool.analyze(job)
        pool.remember([first.links[0].url])
        after_one = await pool.analyze(job)
        pool.remember(link.url for link in first.links)
        after_all = await pool.analyze(job)
    finally:
        await pool.close()
    assert len(first.links) >= 3
    assert again.links == first.links  # nothing remembered: nothing left out
    assert after_one.links == first.links[1:]
    assert after_one.known == 1
    assert after_all.links == ()
    assert after_all.known == len(first.links)
    assert after_all.counts.rows == 1  # the page alone


async def test_a_worker_given_no_page_for_long_is_owed_only_the_newest_known_links() -> None:
    """The links owed to a worker that analyses nothing (its servers' pages small) are
    bounded by what its memory of known URLs keeps: the oldest are let go, not kept in
    the crawl's process for as long as the crawl runs."""
    job = _a_page_with_links()
    pool = await AnalysisPool.start(1, TopicScorer().fit([TOPIC]).n_features, BOTH_HOSTS)
    try:
        first = await pool.analyze(job)
        oldest, newest = first.links[0].url, first.links[-1].url
        filler = (f"http://127.0.0.1:8000/known/{n}" for n in range(KNOWN_URLS_MEMORY))
        pool.remember([oldest, *filler, newest])
        after = await pool.analyze(job)
    finally:
        await pool.close()
    assert len(first.links) >= 3
    assert after.links == first.links[:-1]  # the newest left out; the oldest let go
    assert after.known == 1


async def test_a_worker_leaves_out_the_links_beyond_the_crawls_scope() -> None:
    """Told the crawl's scope at its start, a worker keeps a page's links within it, each
    with its host, and those beyond its depth not at all."""
    visit = next(v for v in _visits(40) if b"127.0.0.9" in (v.response.body or b""))
    scorer = TopicScorer().fit([TOPIC])
    job = Processor(
        scorer=scorer, scope=SCOPE, store_text=True, relevance_threshold=0.1
    ).analysis_job(visit)
    assert job is not None
    shallow = Scope.of({"127.0.0.1"}, max_depth=job.depth - 1)
    unbounded, bounded = (
        await AnalysisPool.start(1, scorer.n_features, SCOPE),
        await AnalysisPool.start(1, scorer.n_features, shallow),
    )
    try:
        kept = await unbounded.analyze(job)
        too_deep = await bounded.analyze(job)
    finally:
        await unbounded.close()
        await bounded.close()
    assert len(kept.links) >= 3
    assert {URL(link.url).host for link in kept.links} == {"127.0.0.1"}
    assert {link.host for link in kept.links} == {"127.0.0.1:8000"}
    assert kept.counts.rows == 1 + 2 * len(kept.links)  # the page, its links' texts, contexts
    assert too_deep.links == ()
    assert too_deep.counts.rows == 1


def test_a_worker_loads_neither_scipy_nor_scikit_learn() -> None:
    """What a worker imports, from its start to its end, while it analyses a page."""
    visit = _visits(20)[1]
    scorer = TopicScorer().fit([TOPIC])
    job = Processor(
        scorer=scorer, scope=SCOPE, store_text=True, relevance_threshold=0.1
    ).analysis_job(visit)
    run = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "crawler.process.analysis_worker", "1024"],
        input=frame(SCOPE) + frame((job, [])),
        capture_output=True,
        check=True,
        timeout=60,
    )
    (size,) = FRAME.unpack(run.stdout[: FRAME.size])
    done, analysis = pickle.loads(run.stdout[FRAME.size : FRAME.size + size])
    assert done
    assert len(analysis.links) >= 3
    imported = {line.split("|")[-1].strip() for line in run.stderr.decode().splitlines()}
    assert "crawler.process.parse" in imported
    assert sorted(m for m in imported if m.split(".")[0] in ("scipy", "sklearn")) == []


async def test_a_worker_ends_when_its_crawl_is_killed() -> None:
    """A crawl killed with SIGKILL cannot stop its workers: its end closes their pipe,
    and they end too."""
    script = textwrap.dedent(
        """
        import asyncio, sys
        from crawler.net.scope import Scope
        from crawler.process.analysis_pool import AnalysisPool

        async def main():
            pool = await AnalysisPool.start(2, 1024, Scope.of({"127.0.0.1"}))
            print(*(worker.process.pid for worker in pool._workers), flush=True)
            await asyncio.sleep(60)

        asyncio.run(main())
        """
    )
    crawl = await asyncio.create_subprocess_exec(
        sys.executable, "-c", script, stdout=asyncio.subprocess.PIPE
    )
    assert crawl.stdout is not None
    workers = [int(pid) for pid in (await crawl.stdout.readline()).split()]
    assert len(workers) == 2
    assert all(_running(pid) for pid in workers)
    crawl.kill()
    await crawl.wait()
    for _ in range(100):
        if not any(_running(pid) for pid in workers):
            break
        await asyncio.sleep(0.1)
    assert [pid for pid in workers if _running(pid)] == []


def _running(pid: int) -> bool:
    """Whether the process runs (a zombie, ended but not reaped, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except (FileNotFoundError, IndexError):
        return False
