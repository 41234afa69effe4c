"""CPU time of the response processor's work on one page, on real HTML read from disk.

The pages are the real web's (`bench/realweb/`): its ground truth's pages, in
breadth-first order from its seeds (the order a `--policy bfs` crawl meets them), read
from the installed documentation, so that no server, network or database is timed.
Each repetition gives a fresh `Processor` (fresh scorer, caches and filters) every page
in that order, as a crawl's event loop does: parse, count terms, score, estimate and
scope the links, build the write. The baseline is the minimal loop's work on the same
bytes (`bench/minimal_loop.py`: selectolax parse, every `a[href]` joined with urljoin),
timed in the same process, interleaved repetition by repetition; the figures are medians
of CPU time per page, and their ratio, and the processor's two parts: the analysis (what
the worker processes do in a crawl) and the scoring (what the event loop does).

    python bench/page_cost.py --pages 4000 --repeats 5

To compare two versions of the code, run the same script with each on PYTHONPATH,
alternating, e.g. the code before a change extracted with `git archive`:

    PYTHONPATH=/tmp/before python bench/page_cost.py --json
    PYTHONPATH=$PWD python bench/page_cost.py --json
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import sys
import time
from collections import deque
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urldefrag, urljoin, urlsplit

from selectolax.lexbor import LexborHTMLParser
from yarl import URL

from crawler.net.fetcher import Response
from crawler.net.scope import Scope
from crawler.net.urls import host_key
from crawler.net.visit import Visit
from crawler.outcomes import Outcome
from crawler.pipeline.processor import Processor
from policies import Candidate, TopicScorer

csv.field_size_limit(sys.maxsize)


def bfs_pages(truth: Path, hosts: Path, limit: int) -> list[tuple[str, int, bytes]]:
    """(URL, depth, body) of the first `limit` pages with a file, breadth-first."""
    roots = {}
    with hosts.open() as rows:
        for row in csv.DictReader(rows, delimiter="\t"):
            roots[f"{row['address']}:{row['port']}"] = Path(row["root"])
    children: dict[str, list[str]] = {}
    with (truth / "links.tsv").open() as rows:
        next(rows)
        for line in rows:
            source, _, target = line.rstrip("\n").partition("\t")
            children.setdefault(source, []).append(target)
    seeds = (truth / "seeds.txt").read_text().split()
    pages = []
    seen = set(seeds)
    queue = deque((seed, 0) for seed in seeds)
    while queue and len(pages) < limit:
        url, depth = queue.popleft()
        parts = urlsplit(url)
        root = roots.get(parts.netloc)
        path = parts.path + ("index.html" if parts.path.endswith("/") else "")
        file = None if root is None else root / path.lstrip("/")
        if file is not None and file.is_file():
            pages.append((url, depth, file.read_bytes()))
        for child in children.get(url, ()):
            if child not in seen:
                seen.add(child)
                queue.append((child, depth + 1))
    return pages


def visits(pages: list[tuple[str, int, bytes]]) -> list[Visit]:
    now = datetime.now(UTC)
    made = []
    for url_id, (url, depth, body) in enumerate(pages, 1):
        parsed = URL(url, encoded=True)
        response = Response(
            url=parsed,
            status=200,
            content_type="text/html",
            charset=None,
            location=None,
            retry_after=None,
            x_robots_tag=None,
            body=body,
            truncated=False,
            size=len(body),
        )
        candidate = Candidate(url_id, url, host_key(parsed), depth, 0.0)
        made.append(Visit(candidate, Outcome.OK, url, response, now))
    return made


def minimal_parse(pages: list[tuple[str, int, bytes]]) -> None:
    """The minimal loop's work on a page: parse, join every href, drop the fragment."""
    seen: set[str] = set()
    for url, _, body in pages:
        for anchor in LexborHTMLParser(body).css("a[href]"):
            link = urldefrag(urljoin(url, anchor.attributes.get("href") or ""))[0]
            if link not in seen:
                seen.add(link)


def process(visit_list: list[Visit], topic: str) -> tuple[int, float, float]:
    """The processor on every page; (links written, CPU seconds analysing, scoring)."""
    hosts = {visit.candidate.host.split(":")[0] for visit in visit_list}
    processor = Processor(
        scorer=TopicScorer().fit([topic]),
        scope=Scope.of(hosts),
        store_text=True,
        relevance_threshold=0.2,
    )
    links, analysing, scoring = 0, 0.0, 0.0
    for visit in visit_list:
        started = time.process_time()
        job = processor.analysis_job(visit)
        analysis = None if job is None else processor.analyse(job)
        analysed = time.process_time()
        links += len(processor.score(visit, analysis).write.links)
        analysing += analysed - started
        scoring += time.process_time() - analysed
    return links, analysing, scoring


def cpu_seconds(work: Callable[[], object]) -> tuple[float, object]:
    started = time.process_time()
    result = work()
    return time.process_time() - started, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", type=Path, default=Path("/tmp/realweb"))
    parser.add_argument("--truth", default="git", help="ground truth (topic) under DIR/truth")
    parser.add_argument("--pages", type=int, default=4000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--topic", default="solar energy")
    parser.add_argument("--json", action="store_true", help="one JSON line, no table")
    args = parser.parse_args()

    pages = bfs_pages(args.dir / "truth" / args.truth, args.dir / "hosts.tsv", args.pages)
    visit_list = visits(pages)
    baseline, processor, analysis, scoring, written = [], [], [], [], 0
    for _ in range(args.repeats):
        seconds, _ = cpu_seconds(lambda: minimal_parse(pages))
        baseline.append(1000 * seconds / len(pages))
        started = time.process_time()
        written, analysing, scored = process(visit_list, args.topic)
        processor.append(1000 * (time.process_time() - started) / len(pages))
        analysis.append(1000 * analysing / len(pages))
        scoring.append(1000 * scored / len(pages))
    summary = {
        "pages": len(pages),
        "megabytes": round(sum(len(body) for _, _, body in pages) / 1e6, 1),
        "links_written": written,
        "repeats": args.repeats,
        "minimal_cpu_ms_per_page": round(statistics.median(baseline), 3),
        "processor_cpu_ms_per_page": round(statistics.median(processor), 3),
        "analysis_cpu_ms_per_page": round(statistics.median(analysis), 3),
        "scoring_cpu_ms_per_page": round(statistics.median(scoring), 3),
        "ratio": round(
            statistics.median(p / b for p, b in zip(processor, baseline, strict=True)), 2
        ),
    }
    if args.json:
        print(json.dumps(summary))
        return
    print(f"{summary['pages']} pages ({summary['megabytes']} MB), {args.repeats} repetitions")
    print(f"minimal loop's parse  {summary['minimal_cpu_ms_per_page']:7.3f} CPU ms/page")
    print(f"processor             {summary['processor_cpu_ms_per_page']:7.3f} CPU ms/page")
    print(f"  its analysis        {summary['analysis_cpu_ms_per_page']:7.3f} CPU ms/page")
    print(f"  its scoring         {summary['scoring_cpu_ms_per_page']:7.3f} CPU ms/page")
    print(f"ratio                 {summary['ratio']:7.2f}x (median of the repetitions' ratios)")
    print(f"links written         {written}")


if __name__ == "__main__":
    main()
