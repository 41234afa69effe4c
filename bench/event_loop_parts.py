"""CPU time of three parts of the event loop's work, each beside the way it could be done
instead, on the real web's pages read from disk (as `bench/page_cost.py` reads them):

- the hash of a page's body that tells a later visit the page changed
  (`crawler.pipeline.parse.body_fingerprint`), which the analysis takes (a worker
  process's work in a crawl) rather than the event loop;
- a page's term counts read into NumPy once and its three parts sliced from them
  (`Rows.of(counts).rows(...)`, as the processor reads them), or each part read from
  the buffers on its own;
- the scorer's learned state with TERMS terms known (their counts drawn at random),
  saved as the crawl's checkpoints save it (`TopicScorer.get_state`: the arrays taken,
  then an .npz archive deflated at zlib's fastest level), or its arrays with
  `np.savez_compressed` (zlib's default level);
- the scorer's refresh of its weights and topic vector (every 2% of growth of the pages
  it has seen), into new arrays of 2**18 each time as it does, or over arrays kept,
  with the C allocator set as in a crawl's process (`crawler.memory`: a block of 128 KiB
  or more is a mapping of its own) and BLAS on the calling thread (`crawler.cores`),
  and the scorer's whole work on each page so.

It also tells how many of the pages, and of their bytes, go to a worker process, or
come back from it, in frames larger than a pipe holds by Linux's default (64 KiB).

The least CPU time of REPEATS timings, in µs a page (ms a save for the state).

    python bench/event_loop_parts.py [--pages 2000] [--terms 150000] [--repeats 7]
"""

from __future__ import annotations

import argparse
import io
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from page_cost import bfs_pages

from crawler.cores import compute_on_the_calling_thread
from crawler.memory import return_large_blocks
from crawler.net.scope import LinkScope, Scope
from crawler.net.urls import KnownUrls, LinkResolver
from crawler.pipeline.analysis_worker import AnalysisJob, frame
from crawler.pipeline.parse import analyze, body_fingerprint
from policies import TopicScorer
from policies.relevance import Rows
from policies.terms import TermCounts

DEFAULT_PIPE_BYTES = 2**16  # what a pipe holds by Linux's default


def cpu_seconds(work: Callable[[], object], repeats: int) -> float:
    """The least CPU time of `work` in `repeats` timings, in seconds: what it costs
    with the least of the machine's noise."""
    times = []
    for _ in range(repeats):
        started = time.process_time()
        work()
        times.append(time.process_time() - started)
    return min(times)


def read_part(counts: TermCounts, start: int, stop: int | None = None) -> Rows:
    """Rows `start` to `stop` of `counts`, read from its buffers for this part alone."""
    stop = counts.rows if stop is None else stop
    indptr = np.frombuffer(counts.indptr, dtype=np.int64)[start : stop + 1]
    first, last = int(indptr[0]), int(indptr[-1])
    return Rows(
        indptr - first,
        np.frombuffer(counts.indices, dtype=np.int32)[first:last],
        np.frombuffer(counts.data, dtype=np.float32)[first:last],
        counts.n_features,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", type=Path, default=Path("/tmp/realweb"))
    parser.add_argument("--truth", default="git", help="ground truth (topic) under DIR/truth")
    parser.add_argument("--pages", type=int, default=2000)
    parser.add_argument("--terms", type=int, default=150_000)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()

    pages = bfs_pages(args.dir / "truth" / args.truth, args.dir / "hosts.tsv", args.pages)
    scope = LinkScope(Scope.of({url.split("/")[2].split(":")[0] for url, _, _ in pages}))
    scorer = TopicScorer().fit(["solar energy"])
    resolver, known, analyses = LinkResolver(), KnownUrls(), []
    for url, depth, body in pages:
        analysis = analyze(
            body,
            url=url,
            charset=None,
            x_robots_tag=None,
            counter=scorer.counter_.hasher,
            resolver=resolver,
            known=known,
            scope=scope,
            depth=depth + 1,
        )
        for link in analysis.links:
            known.add(link.url)
        analyses.append(analysis)

    def hash_bodies() -> None:
        for _, _, body in pages:
            body_fingerprint(body)

    def read_three_times() -> None:
        for analysis in analyses:
            n = len(analysis.links)
            counts = analysis.counts
            read_part(counts, 0, 1), read_part(counts, 1, 1 + n), read_part(counts, 1 + n)

    def read_once() -> None:
        for analysis in analyses:
            n = len(analysis.links)
            counts = Rows.of(analysis.counts)
            counts.rows(0, 1), counts.rows(1, 1 + n), counts.rows(1 + n)

    per_page = 1e6 / len(pages)
    print(f"{len(pages)} pages, µs a page (the least of {args.repeats})")
    for name, work in (
        ("body hash", hash_bodies),
        ("counts read three times", read_three_times),
        ("counts read once, sliced", read_once),
    ):
        print(f"  {name}: {per_page * cpu_seconds(work, args.repeats):.1f}")

    jobs = np.array(
        [
            len(frame((AnalysisJob(body, url, None, None, depth + 1), [])))
            for url, depth, body in pages
        ]
    )
    answers = np.array([len(frame((True, analysis))) for analysis in analyses])
    for name, sizes in (("pages to a worker", jobs), ("answers from it", answers)):
        large = sizes > DEFAULT_PIPE_BYTES
        print(
            f"{name}: {large.mean():.1%} of them in frames over 64 KiB, "
            f"{sizes[large].sum() / sizes.sum():.0%} of their bytes"
        )

    random = np.random.default_rng(0)
    terms = random.choice(scorer.n_features, args.terms, replace=False)
    scorer.document_frequency_[terms] = random.integers(1, 5000, len(terms))
    scorer.n_documents_ = 20_000
    relevant = random.choice(scorer.n_features, args.terms // 3, replace=False)
    scorer.feedback_sum_[relevant] = random.random(len(relevant)) * 10
    scorer.n_feedback_ = 500
    with np.load(io.BytesIO(scorer.get_state())) as state:
        arrays = {name: state[name] for name in state.files}

    def numpys() -> bytes:
        buffer = io.BytesIO()
        np.savez_compressed(buffer, **arrays)
        return buffer.getvalue()

    own_ms = 1000 * cpu_seconds(scorer.get_state, args.repeats)
    numpys_ms = 1000 * cpu_seconds(numpys, args.repeats)
    print(f"the scorer's state, {args.terms:,} terms, ms a save")
    print(f"  get_state, at zlib's level 1: {own_ms:.0f}, {len(scorer.get_state()) / 1000:,.0f} KB")
    print(f"  np.savez_compressed: {numpys_ms:.0f}, {len(numpys()) / 1000:,.0f} KB")

    return_large_blocks()  # as a crawl's process has them, and BLAS on the calling thread
    compute_on_the_calling_thread()
    topic = scorer.topic_counts_.indices
    weights = scorer._weigh(scorer.topic_counts_)
    log_frequency = np.log1p(scorer.document_frequency_)
    own_idf, own_topic = np.empty(scorer.n_features), np.zeros(scorer.n_features)
    refreshes = 100

    def into_new_arrays() -> None:
        for _ in range(refreshes):
            (np.log1p(20_000) + 1.0) - log_frequency
            np.zeros(scorer.n_features)[topic] = weights

    def into_own_arrays() -> None:
        for _ in range(refreshes):
            np.subtract(np.log1p(20_000) + 1.0, log_frequency, out=own_idf)
            own_topic[topic] = weights

    def score_pages() -> None:
        fresh = TopicScorer().fit(["solar energy"])
        for analysis in analyses:
            n = len(analysis.links)
            counts = Rows.of(analysis.counts)
            page = counts.rows(0, 1)
            fresh.partial_fit_counts(page)
            relevance = float(fresh.score_counts(page)[0])
            fresh.estimate_links(counts.rows(1, 1 + n), relevance, counts.rows(1 + n))

    per_refresh = 1e6 / refreshes
    print("a refresh of the weights and topic, µs, with a crawl's allocator settings")
    print(f"  into new arrays: {per_refresh * cpu_seconds(into_new_arrays, args.repeats):.0f}")
    print(f"  over kept arrays: {per_refresh * cpu_seconds(into_own_arrays, args.repeats):.0f}")
    print(f"the scorer's work a page: {per_page * cpu_seconds(score_pages, args.repeats):.1f} µs")


if __name__ == "__main__":
    main()
