"""The page's pure work on every core: decoding, parsing, cleaning the text, resolving
the links and counting terms (`crawler.pipeline.parse.analyze`) run in a pool of worker
processes; the processor keeps the stateful rest in the crawl's process (the TF-IDF
model's document frequencies and feedback, link estimates, scope), so the learned state
has one owner and the workers count terms only, with the stateless hashing counter.
A worker loads neither SciPy nor scikit-learn (`policies.terms`).

Without workers the page is analysed on the event loop, as the papers' single indexing
server. Workers are separate processes (spawned, so that no thread of the event loop's
process is copied into them); each keeps its own cache of resolved links and its own
memory of the links known to the crawl (`KnownUrls`), told with each page the links the
crawl's process handed to storage since that worker's last page (`remember`). So a
worker leaves out the links the crawl knows before it reads or counts them, as the
event loop does: on a real site most of a page's links are known. A link made known
while a worker's page was under way is left out by the processor afterwards.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import threading
import time
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

from crawler.net.urls import KnownUrls, LinkResolver
from crawler.pipeline.parse import PageAnalysis, analyze
from policies.terms import TermHasher


@dataclass(frozen=True, slots=True)
class AnalysisJob:
    """What a worker needs of a response to analyse its page."""

    body: bytes
    url: str
    charset: str | None
    x_robots_tag: str | None


_counter: TermHasher | None = None  # a worker's own, set when it starts
_resolver = LinkResolver()  # a worker's own cache of resolved links
_known = KnownUrls()  # a worker's own memory of the links known to the crawl
ORPHAN_CHECK_SECONDS = 1.0  # how often a worker looks whether its crawl still runs


def _start_worker(counter: TermHasher, crawl: int) -> None:
    global _counter
    _counter = counter
    # a crawl killed with SIGKILL cannot stop its workers: they stop themselves, even one
    # that starts after the crawl died (its parent is then already another process)
    threading.Thread(target=_exit_when_orphaned, args=(crawl,), daemon=True).start()


def _exit_when_orphaned(crawl: int) -> None:
    while os.getppid() == crawl:
        time.sleep(ORPHAN_CHECK_SECONDS)
    os._exit(0)


def _analyze_in_worker(job: AnalysisJob, newly_known: list[str]) -> PageAnalysis:
    assert _counter is not None, "the worker was started without a counter"
    for url in newly_known:
        _known.add(url)
    return analyze(
        job.body,
        url=job.url,
        charset=job.charset,
        x_robots_tag=job.x_robots_tag,
        counter=_counter,
        resolver=_resolver,
        known=_known,
    )


class AnalysisPool:
    """`workers` processes analysing pages, each its pages in the order given;
    `analyze` raises what `parse.analyze` raises."""

    def __init__(self, workers: int, counter: TermHasher) -> None:
        if workers < 1:
            raise ValueError("a pool of analysis workers needs at least 1 of them")
        self.workers = workers
        spawn = multiprocessing.get_context("spawn")
        self._executors = [
            ProcessPoolExecutor(
                max_workers=1,
                mp_context=spawn,
                initializer=_start_worker,
                initargs=(counter, os.getpid()),
            )
            for _ in range(workers)
        ]
        self._unsent: list[list[str]] = [[] for _ in range(workers)]  # known, by worker

    def remember(self, urls: Iterable[str]) -> None:
        """Links handed to storage: every worker leaves them out from its next page on."""
        urls = list(urls)
        for unsent in self._unsent:
            unsent.extend(urls)

    async def analyze(self, job: AnalysisJob, worker: int = 0) -> PageAnalysis:
        newly_known, self._unsent[worker] = self._unsent[worker], []
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self._executors[worker], _analyze_in_worker, job, newly_known
        )

    def close(self) -> None:
        """Stop the workers once the page each is analysing is done; pages not begun
        are not analysed."""
        for executor in self._executors:
            executor.shutdown(wait=True, cancel_futures=True)
