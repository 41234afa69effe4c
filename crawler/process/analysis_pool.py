"""The page's pure work on every core: decoding, parsing, cleaning the text, resolving
the links and counting terms (`crawler.process.parse.analyze`) run in worker processes
(`crawler.process.analysis_worker`); the processor keeps the stateful rest in the
crawl's process (the TF-IDF model's document frequencies and feedback, link
estimates), so the learned state has one owner and the workers count terms only, with
the stateless hashing counter. Each worker is told the crawl's scope at its start and
leaves out the links beyond it, as the event loop does.

Without workers the page is analysed on the event loop, as the papers' single indexing
server. With them, the event loop itself writes each worker's jobs to its pipe and reads
its answers (asyncio's pipe transports): no thread of the crawl's process takes a turn
at the interpreter for the hand-over. Each worker is told with each page the links the
crawl's process handed to storage since that worker's last page (`remember`), and
leaves them out before it reads or counts them, as the event loop does: on a real site
most of a page's links are known. A link made known while a worker's page was under way
is left out by the processor afterwards.

A small page is not worth the hand-over: writing its job, waking the worker and reading
its answer back cost the two processes more than parsing a few kilobytes. The pool
takes a page of `inline_below` bytes or more (`takes`); a smaller one is analysed on the
event loop, as with no workers, and scored in its turn all the same.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pickle
import sys
import sysconfig
from collections import deque
from collections.abc import Iterable
from pathlib import Path

from crawler.net.known_urls import KNOWN_URLS_MEMORY
from crawler.net.scope import Scope
from crawler.net.url_parameters import TRACKING_PARAMETERS, CanonicalRules
from crawler.process.analysis_worker import FRAME, PIPE_BYTES, AnalysisJob, frame
from crawler.process.parse import PageAnalysis

__all__ = ["AnalysisJob", "AnalysisPool", "WorkerDiedError"]

CLOSE_SECONDS = 10.0  # a closed worker's time to finish its pages before it is killed
# the workers import this package where the crawl's process found it: from a source
# checkout, its directory goes first on their path; installed, they find it anyway
_HOME = str(Path(__file__).resolve().parents[2])
_INSTALLED = _HOME in {
    str(Path(sysconfig.get_paths()[kind]).resolve()) for kind in ("purelib", "platlib")
}


class WorkerDiedError(RuntimeError):
    """A worker process ended while pages were given to it (killed, out of memory)."""


class _Worker:
    """One worker process; it answers its jobs in the order they were written."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdin is not None
        assert process.stdout is not None
        self.process = process
        self._jobs = process.stdin
        self._answers = process.stdout
        self._waiting: deque[asyncio.Future[PageAnalysis]] = deque()
        self._ended: WorkerDiedError | None = None
        self._reader = asyncio.create_task(self._read_answers(), name=f"worker-{process.pid}")

    def tell(self, value: object) -> None:
        """Write a frame the worker reads before its jobs (the crawl's scope)."""
        self._jobs.write(frame(value))

    async def analyze(self, job: AnalysisJob, newly_known: list[str]) -> PageAnalysis:
        if self._ended is not None:
            raise self._ended
        answer = asyncio.get_running_loop().create_future()
        self._waiting.append(answer)
        self._jobs.write(frame((job, newly_known)))
        try:
            with contextlib.suppress(ConnectionError):  # a worker gone: its reader says so
                await self._jobs.drain()
            return await answer
        except asyncio.CancelledError:
            answer.cancel()  # its answer, when it comes, is dropped
            raise

    async def _read_answers(self) -> None:
        try:
            while True:
                (size,) = FRAME.unpack(await self._answers.readexactly(FRAME.size))
                done, value = pickle.loads(await self._answers.readexactly(size))
                answer = self._waiting.popleft()
                if answer.cancelled():
                    continue
                if done:
                    answer.set_result(value)
                else:
                    answer.set_exception(value)
        except asyncio.IncompleteReadError:  # its end: closed, killed or crashed
            status = await self.process.wait()
            self._ended = WorkerDiedError(
                f"analysis worker {self.process.pid} ended with status {status}"
            )
        except Exception as error:  # an answer that cannot be read: no more can be
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()
            await self.process.wait()
            self._ended = WorkerDiedError(f"analysis worker {self.process.pid}: {error!r}")
        finally:
            ended = self._ended = self._ended or WorkerDiedError("no longer read")
            while self._waiting:
                answer = self._waiting.popleft()
                if not answer.done():
                    answer.set_exception(ended)

    async def close(self) -> None:
        self._jobs.close()
        try:
            await asyncio.wait_for(self.process.wait(), CLOSE_SECONDS)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()
            await self.process.wait()
        await self._reader


class AnalysisPool:
    """`workers` processes analysing pages, each its pages in the order given;
    `analyze` raises what `parse.analyze` raises, and `WorkerDiedError` for a worker
    that ended."""

    def __init__(self, workers: list[_Worker], inline_below: int = 0) -> None:
        self._workers = workers
        self.workers = len(workers)
        self.inline_below = inline_below
        # known, by worker: at most the newest a worker's memory of known URLs keeps in
        # a generation, since a worker given no page for long (the small pages analysed
        # on the event loop) would otherwise be owed every link of the crawl
        self._unsent = [deque[str](maxlen=KNOWN_URLS_MEMORY) for _ in workers]

    @classmethod
    async def start(
        cls,
        workers: int,
        n_features: int,
        scope: Scope,
        *,
        inline_below: int = 0,
        stripped: tuple[str, ...] = TRACKING_PARAMETERS,
    ) -> AnalysisPool:
        if workers < 1:
            raise ValueError("a pool of analysis workers needs at least 1 of them")
        if inline_below < 0:
            raise ValueError(f"inline_below is a number of bytes, not {inline_below}")
        environment = dict(os.environ)
        if not _INSTALLED:
            environment["PYTHONPATH"] = os.pathsep.join(
                filter(None, [_HOME, os.environ.get("PYTHONPATH")])
            )
        started = []
        try:
            for _ in range(workers):
                process = await asyncio.create_subprocess_exec(
                    sys.executable,
                    "-m",
                    "crawler.process.analysis_worker",
                    str(n_features),
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE,
                    env=environment,
                    limit=PIPE_BYTES,  # the answers' reader pauses its pipe beyond twice this
                )
                worker = _Worker(process)
                started.append(worker)
                worker.tell(scope)
                worker.tell(CanonicalRules(stripped))
        except BaseException:
            for worker in started:
                await worker.close()
            raise
        return cls(started, inline_below)

    def takes(self, job: AnalysisJob) -> bool:
        """Whether the page is worth handing to a worker."""
        return len(job.body) >= self.inline_below

    def remember(self, urls: Iterable[str]) -> None:
        """Links handed to storage: every worker leaves them out from its next page on
        (the newest `KNOWN_URLS_MEMORY` of those since its last page)."""
        urls = list(urls)
        for unsent in self._unsent:
            unsent.extend(urls)

    async def analyze(self, job: AnalysisJob, worker: int = 0) -> PageAnalysis:
        newly_known = list(self._unsent[worker])
        self._unsent[worker].clear()
        return await self._workers[worker].analyze(job, newly_known)

    async def close(self) -> None:
        """Stop the workers once they have answered the pages given to them."""
        for worker in self._workers:
            await worker.close()
