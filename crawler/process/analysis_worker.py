"""An analysis worker process: `python -m crawler.process.analysis_worker N_FEATURES`.

It reads from its standard input the crawl's `Scope` and URL rules, then jobs, and writes their
answers, in the same order, to its standard output, each a frame: the length of a
pickle (8 bytes, big-endian), then the pickle. A job is an `AnalysisJob` and the links
the crawl made known since the worker's last job; its answer is (True, the
`PageAnalysis`) or (False, the exception `analyze` raised). Both pipes are widened to
`PIPE_BYTES` at its start, where the system allows. The worker keeps from page
to page its own cache of resolved links, memory of known links (`KnownUrls`) and of
links out of scope (`LinkScope`), so that it leaves both out before it reads or counts
them, as the event loop does.

It ends at the end of its input: when the crawl closes the pipe, or dies (even by
SIGKILL, which closes it too). A terminal's Ctrl-C is the crawl's to handle: the worker
ignores SIGINT and finishes the pages it was given. It loads neither SciPy nor
scikit-learn (`policies.terms` counts terms).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pickle
import signal
import struct
import sys
from dataclasses import dataclass
from typing import BinaryIO

from crawler.memory import return_large_blocks
from crawler.net.known_urls import KnownUrls
from crawler.net.scope import LinkScope, Scope
from crawler.net.url_parameters import CanonicalRules
from crawler.net.urls import LinkResolver
from crawler.process.parse import analyze
from policies.terms import TermHasher

FRAME = struct.Struct("!Q")  # the length of the pickle that follows
# what each of a worker's pipes holds (Linux's default is 64 KiB, its limit for anyone
# 1 MiB): a page of hundreds of KB is written in one go, not in a turn of the crawl's
# event loop for each 64 KiB the worker reads, and its answer read in as few
PIPE_BYTES = 2**20


@dataclass(frozen=True, slots=True)
class AnalysisJob:
    """What a worker needs of a response to analyse its page."""

    body: bytes
    url: str
    charset: str | None
    x_robots_tag: str | None
    depth: int  # of the page's links
    link: str | None = None  # the Link header, which may name the page's canonical URL


def frame(value: object) -> bytes:
    payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    return FRAME.pack(len(payload)) + payload


def serve(jobs: BinaryIO, answers: BinaryIO, n_features: int) -> None:
    """Answer the jobs of `jobs` until it ends."""
    counter = TermHasher(n_features=n_features)
    resolver = LinkResolver()
    known = KnownUrls()
    scope: LinkScope | None = None
    while len(header := jobs.read(FRAME.size)) == FRAME.size:
        (size,) = FRAME.unpack(header)
        if scope is None:
            crawl_scope = pickle.loads(jobs.read(size))
            if not isinstance(crawl_scope, Scope):
                raise TypeError(f"the first frame is the crawl's Scope, not {crawl_scope!r}")
            scope = LinkScope(crawl_scope)
            continue
        loaded = pickle.loads(jobs.read(size))
        if isinstance(loaded, CanonicalRules):  # before any URL is read
            loaded.apply()
            continue
        job, newly_known = loaded
        for url in newly_known:
            known.add(url)
        try:
            analysis = analyze(
                job.body,
                url=job.url,
                charset=job.charset,
                x_robots_tag=job.x_robots_tag,
                link=job.link,
                counter=counter,
                resolver=resolver,
                known=known,
                scope=scope,
                depth=job.depth,
            )
            answer = frame((True, analysis))
        except Exception as error:  # the page's outcome: the crawl decides what it means
            try:
                answer = frame((False, error))
            except Exception:  # an exception that does not pickle
                answer = frame((False, RuntimeError(f"{type(error).__name__}: {error}")))
        answers.write(answer)
        answers.flush()


def widen_pipe(fd: int) -> None:
    """Let the pipe of `fd` hold `PIPE_BYTES` where the system allows (a smaller
    `fs.pipe-max-size`, no such fcntl, not a pipe: it stays as it is)."""
    with contextlib.suppress(OSError, AttributeError):
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    return_large_blocks()  # a big page's parse tree leaves with it
    # answers go to the pipe the crawl reads; anything printed by mistake, to stderr
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    for pipe in (sys.stdin.fileno(), answers.fileno()):
        widen_pipe(pipe)
    serve(sys.stdin.buffer, answers, int(sys.argv[1]))


if __name__ == "__main__":
    main()
