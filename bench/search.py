"""Full-text search and main text: what they cost a page, and how fast a search answers.

`cost`: CPU time a page of the analysis (parse, links, terms, main text) and of its
write (the page's row, its compressed text and, where the code has one, its search
index entry: one SQLite transaction a batch, as the storage writer does), over the
Python documentation as Debian installs it (python3.11-doc, 530 pages), read from disk.
With `--before REV` it runs itself on the code of that commit (or of a directory holding
a tree of the code) and on the working tree, alternating, and prints both and the ratio:

    python -m bench search cost --before 49514dd --rounds 3

`precision`: precision at 10 of `crawler search` on a crawl judged by a ground truth in
the testbed's format (pages.tsv: url, relevance): a hit is relevant where the truth
gives its URL `--threshold` or more. With `--query-truths DIR`, each hit is judged by
the query's own truth too (`ground_truth.py --topic NAME=QUERY --out DIR`, NAME the
query's words joined by hyphens): relevant to the topic, to the query, or to both.

    python -m bench search precision --db sparse.db --truth /tmp/realweb/truth/sparse \
        --threshold 0.15 "sparse matrix" "compressed sparse row" ...

`latency`: a SQLite database of `--pages` pages (100,000 by default) written through
the storage layer, each a run of 250 words of those same pages' main text taken at a
random place (real words in their real order) with a relevance drawn as a focused
crawl's are (CRAWL_RELEVANCE; `--uniform`: uniform in 0..1), then each query of QUERIES
timed through `storage.search_pages` as `crawler search` runs it: p50, p95 and worst in ms,
and the p50 and p95 of the CPU time it took (what it costs on a machine busy with others).

    python -m bench search latency --pages 100000
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import storage

DOCS = Path("/usr/share/doc/python3.11-doc/html")
BATCH = 50  # pages a write transaction in `cost`, about the writer's batch in a crawl
FILL_BATCH = 1_000  # pages a transaction when a database is filled for `latency`
PAGE_WORDS = 250
# pages' relevance as a focused crawl's: a crawl of 3,000 pages of SciPy's and Octave's
# manuals on "sparse matrix" scored its pages' cosines at quartiles 0.016, 0.084, 0.162,
# 90% below 0.185; beta(1.2, 9) gives 0.045, 0.092, 0.165, 90% below 0.244
CRAWL_RELEVANCE = (1.2, 9.0)
QUERIES = (
    "python",
    "function",
    "module object",
    "return value",
    "default",
    "socket timeout",
    "unicode string",
    "file descriptor",
    "iterator",
    "coroutine",
    "dataclass field",
    "thread lock",
    "regular expression",
    "exception traceback",
    "dictionary keys",
    "encoding error",
    "subprocess pipe",
    "decimal context",
    "asyncio event loop",
    "abstract base class",
)


def doc_pages(limit: int | None = None) -> list[tuple[str, bytes]]:
    if not DOCS.is_dir():
        sys.exit(f"no Python documentation at {DOCS}: apt-get install python3.11-doc")
    paths = sorted(DOCS.rglob("*.html"))[:limit]
    return [(f"http://127.0.0.1/{p.relative_to(DOCS)}", p.read_bytes()) for p in paths]


def cost(pages: list[tuple[str, bytes]], repeats: int) -> dict[str, float]:
    """Median CPU ms a page of the analysis and of the writes, over `repeats` passes."""
    from crawler.process.parse import analyze
    from policies.terms import TermHasher
    from storage import writes

    analysis_ms, write_ms = [], []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as directory:
            url = f"sqlite:///{directory}/cost.db"
            engine = storage.open_engine(url)
            asyncio.run(storage.create_schema(engine))
            asyncio.run(engine.dispose())
            sync_engine = storage.open_sync_engine(url)
            counter = TermHasher()
            spent_analysis = spent_writes = 0.0
            for start in range(0, len(pages), BATCH):
                batch = pages[start : start + BATCH]
                began = time.process_time()
                analyses = [
                    analyze(body, url=u, charset="utf-8", x_robots_tag=None, counter=counter)
                    for u, body in batch
                ]
                spent_analysis += time.process_time() - began
                began = time.process_time()
                with sync_engine.begin() as connection:
                    queued = writes.add_urls(
                        connection, [storage.NewUrl(u, "127.0.0.1", 0, 0.0) for u, _ in batch]
                    )
                    writes.record_fetches(
                        connection,
                        [
                            _fetched(q.id, analysis.title, analysis.text)
                            for q, analysis in zip(queued, analyses, strict=True)
                        ],
                    )
                spent_writes += time.process_time() - began
            sync_engine.dispose()
        analysis_ms.append(1000 * spent_analysis / len(pages))
        write_ms.append(1000 * spent_writes / len(pages))
    analysis, write = statistics.median(analysis_ms), statistics.median(write_ms)
    return {"analysis_ms": analysis, "write_ms": write, "page_ms": analysis + write}


def _fetched(
    url_id: int, title: str | None, text: str, relevance: float = 0.5
) -> storage.FetchRecord:
    return storage.FetchRecord(
        url_id=url_id,
        final_url=None,
        status=200,
        content_type="text/html",
        content_length=len(text),
        relevance=relevance,
        title=title,
        fetched_at=datetime.now(UTC),
        error=None,
        text=text,
    )


def compare(before: str, rounds: int, repeats: int) -> None:
    """The cost on the code of commit `before` and on the working tree, alternating."""
    here = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as directory:
        if Path(before).is_dir():  # a tree of the code, e.g. with a change taken out
            directory = before
        else:
            archive = subprocess.run(
                ["git", "-C", str(here), "archive", before], check=True, capture_output=True
            ).stdout
            subprocess.run(["tar", "-x", "-C", directory], input=archive, check=True)
        results: dict[str, list[dict[str, float]]] = {"before": [], "after": []}
        for _ in range(rounds):
            for name, tree in (("before", directory), ("after", str(here))):
                out = subprocess.run(
                    [sys.executable, __file__, "cost", "--repeats", str(repeats), "--json"],
                    check=True,
                    capture_output=True,
                    text=True,
                    env={"PYTHONPATH": tree, "PATH": "/usr/bin:/bin"},
                ).stdout
                results[name].append(json.loads(out))
    medians = {
        name: {key: statistics.median(r[key] for r in runs) for key in runs[0]}
        for name, runs in results.items()
    }
    for name, figures in medians.items():
        print(
            f"{name:<7} ({before if name == 'before' else 'working tree'}): "
            f"{figures['page_ms']:.3f} ms/page = analysis {figures['analysis_ms']:.3f} "
            f"+ write {figures['write_ms']:.3f}"
        )
    ratio = medians["after"]["page_ms"] / medians["before"]["page_ms"]
    print(f"after/before: {ratio:.3f} ({100 * (ratio - 1):+.1f}% CPU a page)")


def fill(path: Path, pages: int, seed: int, *, uniform: bool = False) -> None:
    """A database of `pages` pages written through the storage layer."""
    from crawler.process.parse import analyze
    from policies.terms import TermHasher
    from storage import writes

    counter = TermHasher()
    words: list[str] = []
    for u, body in doc_pages():
        analysis = analyze(body, url=u, charset="utf-8", x_robots_tag=None, counter=counter)
        words.extend(analysis.text.split())
    rng = random.Random(seed)
    url = f"sqlite:///{path}"
    engine = storage.open_engine(url)
    asyncio.run(storage.create_schema(engine))
    asyncio.run(engine.dispose())
    sync_engine = storage.open_sync_engine(url)
    began = time.monotonic()
    for start in range(0, pages, FILL_BATCH):
        new = [
            storage.NewUrl(f"http://host{i % 50}.test/page/{i}", f"host{i % 50}.test", 1, 0.0)
            for i in range(start, min(start + FILL_BATCH, pages))
        ]
        records = []
        with sync_engine.begin() as connection:
            for queued in writes.add_urls(connection, new):
                at = rng.randrange(len(words) - PAGE_WORDS)
                title, text = " ".join(words[at : at + 6]), " ".join(words[at : at + PAGE_WORDS])
                relevance = rng.random() if uniform else rng.betavariate(*CRAWL_RELEVANCE)
                records.append(_fetched(queued.id, title, text, relevance))
            writes.record_fetches(connection, records)
        if (start // FILL_BATCH) % 10 == 9:
            print(f"  {start + FILL_BATCH} pages written, {time.monotonic() - began:.0f} s")
    sync_engine.dispose()


async def latency(path: Path, repeats: int) -> dict[str, float]:
    engine = storage.open_engine(f"sqlite+aiosqlite:///{path}")
    timings, cpu = [], []
    try:
        async with engine.connect() as connection:
            for query in QUERIES:  # once each first: the file's pages into the cache
                await storage.search_pages(connection, query)
            for _ in range(repeats):
                for query in QUERIES:
                    began, began_cpu = time.perf_counter(), time.process_time()
                    await storage.search_pages(connection, query)
                    timings.append(1000 * (time.perf_counter() - began))
                    cpu.append(1000 * (time.process_time() - began_cpu))
    finally:
        await engine.dispose()
    timings.sort()
    cpu.sort()
    return {
        "queries": len(timings),
        "p50_ms": statistics.median(timings),
        "p95_ms": timings[int(0.95 * (len(timings) - 1))],
        "max_ms": timings[-1],
        # the process's CPU time (its threads' too): what a search costs on a busy machine
        "cpu_p50_ms": statistics.median(cpu),
        "cpu_p95_ms": cpu[int(0.95 * (len(cpu) - 1))],
    }


def read_truth(truth_dir: Path) -> dict[str, float]:
    import csv

    with (truth_dir / "pages.tsv").open() as rows:
        return {row["url"]: float(row["relevance"]) for row in csv.DictReader(rows, delimiter="\t")}


def query_truth_name(query: str) -> str:
    """The name of a query's own ground truth: `ground_truth.py --topic NAME=QUERY`."""
    return "-".join(query.lower().split())


async def precision(
    db: str, truth_dir: Path, threshold: float, queries: list[str], query_truths: Path | None
) -> None:
    """Precision at 10 judged by the topic's truth and, with `query_truths`, by each
    query's own truth (the query taken as a topic by the same ground truth): a hit is
    relevant to the topic, to the query, or to both. Beside each, the most any order of
    the query's matches could score: the relevant stored pages that hold its words."""
    topic = read_truth(truth_dir)
    means: dict[str, list[float]] = {}
    bounds: dict[str, list[float]] = {}
    engine = storage.open_engine(db)
    try:
        async with engine.connect() as connection:
            for query in queries:
                hits = await storage.search_pages(connection, query, limit=10)
                matches = await storage.search_pages(connection, query, limit=100_000)
                judges = {"topic": [topic]}
                if query_truths is not None:
                    own = read_truth(query_truths / query_truth_name(query))
                    judges |= {"query": [own], "both": [topic, own]}
                line = []
                for name, truths in judges.items():

                    def relevant(url: str, truths: list[dict[str, float]] = truths) -> bool:
                        return all(truth.get(url, 0.0) >= threshold for truth in truths)

                    found = sum(relevant(hit.url) for hit in hits)
                    means.setdefault(name, []).append(found / 10)
                    most = min(10, sum(relevant(match.url) for match in matches))
                    bounds.setdefault(name, []).append(most / 10)
                    line.append(f"{name} {means[name][-1]:.1f} (at most {bounds[name][-1]:.1f})")
                print(f"  P@10 {', '.join(line)}, {len(matches)} matches: {query}")
    finally:
        await engine.dispose()
    print(f"mean precision at 10 over {len(queries)} queries:")
    for name, values in means.items():
        print(
            f"  {name} {statistics.mean(values):.2f} (at most {statistics.mean(bounds[name]):.2f})"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    modes = parser.add_subparsers(dest="mode", required=True)
    cost_mode = modes.add_parser("cost", help="CPU a page of analysis and write")
    cost_mode.add_argument("--before", help="a commit to compare with the working tree")
    cost_mode.add_argument("--rounds", type=int, default=3)
    cost_mode.add_argument("--repeats", type=int, default=3)
    cost_mode.add_argument("--json", action="store_true")
    latency_mode = modes.add_parser("latency", help="search time at many pages")
    latency_mode.add_argument("--pages", type=int, default=100_000)
    latency_mode.add_argument("--repeats", type=int, default=5)
    latency_mode.add_argument("--db", type=Path, default=Path("/tmp/search-bench.db"))
    latency_mode.add_argument("--seed", type=int, default=1)
    latency_mode.add_argument(
        "--uniform", action="store_true", help="relevance uniform in 0..1, not a crawl's"
    )
    precision_mode = modes.add_parser("precision", help="precision at 10 against a truth")
    precision_mode.add_argument("--db", required=True)
    precision_mode.add_argument("--truth", type=Path, required=True, help="holds pages.tsv")
    precision_mode.add_argument("--threshold", type=float, default=0.15)
    precision_mode.add_argument(
        "--query-truths", type=Path, help="holds each query's own truth (query_truth_name)"
    )
    precision_mode.add_argument("queries", nargs="+")
    args = parser.parse_args()
    if args.mode == "precision":
        asyncio.run(precision(args.db, args.truth, args.threshold, args.queries, args.query_truths))
        return
    if args.mode == "cost":
        if args.before:
            compare(args.before, args.rounds, args.repeats)
            return
        figures = cost(doc_pages(), args.repeats)
        print(json.dumps(figures) if args.json else figures)
        return
    if args.db.exists():
        args.db.unlink()
    began = time.monotonic()
    fill(args.db, args.pages, args.seed, uniform=args.uniform)
    print(f"{args.pages} pages written in {time.monotonic() - began:.0f} s ({args.db})")
    figures = asyncio.run(latency(args.db, args.repeats))
    print(
        f"{figures['queries']} searches of {len(QUERIES)} queries at {args.pages} pages: "
        f"p50 {figures['p50_ms']:.1f} ms, p95 {figures['p95_ms']:.1f} ms, "
        f"worst {figures['max_ms']:.1f} ms; CPU p50 {figures['cpu_p50_ms']:.1f} ms, "
        f"p95 {figures['cpu_p95_ms']:.1f} ms"
    )


if __name__ == "__main__":
    main()
