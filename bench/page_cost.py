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

With --rank TOPIC... it times nothing: it scores every page read in that order on its
whole text (title and body) and on its main text (title and `PageAnalysis.text`), each
with a `TopicScorer` of the topic whose inverse document frequencies are learned online,
page by page, as a crawl's are, and says how well each ranks the pages against the
ground truths of the whole text (DIR/truth/TOPIC) and of the main text
(DIR/truth-main/TOPIC, `ground_truth.py --main-text`): the ROC AUC of the relevant
pages (the truth's threshold.txt) against the others, and the precision at R, the
truth's number of relevant pages.

    python bench/page_cost.py --rank sparse memory git --pages 30000
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import statistics
import sys
import time
from collections import deque
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from itertools import islice
from pathlib import Path
from urllib.parse import urldefrag, urljoin, urlsplit

import numpy as np
from selectolax.lexbor import LexborHTMLParser
from sklearn.metrics import roc_auc_score
from yarl import URL

from crawler.fetch.fetcher import Response
from crawler.fetch.visit import Visit
from crawler.net.scope import Scope
from crawler.net.urls import host_key
from crawler.outcomes import Outcome
from crawler.process.nesting import cap_nesting
from crawler.process.parse import MAX_TEXT_CHARS, analyze, decode
from crawler.process.processor import Processor
from policies import Candidate, TopicScorer
from policies.relevance import Rows

csv.field_size_limit(sys.maxsize)


def bfs_pages(truth: Path, hosts: Path, limit: int) -> list[tuple[str, int, bytes]]:
    """(URL, depth, body) of the first `limit` pages with a file, breadth-first."""
    files = islice(bfs_files(truth, hosts), limit)
    return [(url, depth, file.read_bytes()) for url, depth, file in files]


def bfs_files(truth: Path, hosts: Path) -> Iterator[tuple[str, int, Path]]:
    """(URL, depth, file) of the pages with a file, breadth-first from the seeds."""
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
    seen = set(seeds)
    queue = deque((seed, 0) for seed in seeds)
    while queue:
        url, depth = queue.popleft()
        parts = urlsplit(url)
        root = roots.get(parts.netloc)
        path = parts.path + ("index.html" if parts.path.endswith("/") else "")
        file = None if root is None else root / path.lstrip("/")
        if file is not None and file.is_file():
            yield url, depth, file
        for child in children.get(url, ()):
            if child not in seen:
                seen.add(child)
                queue.append((child, depth + 1))


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


def whole_text(body: bytes) -> str:
    """The body's text as `analyze` reads it before taking its main text."""
    tree = LexborHTMLParser(cap_nesting(decode(body, None)))
    tree.strip_tags(["script", "style", "noscript", "template"])
    text = tree.body.text(separator=" ") if tree.body is not None else ""
    return " ".join(text.split())[:MAX_TEXT_CHARS]


def rank(directory: Path, topics: list[str], limit: int) -> list[dict[str, object]]:
    """Each topic's scores of every page, on its whole and on its main text, against each
    ground truth: the relevant pages' ROC AUC and the precision at R."""
    kinds = ("whole", "main")
    scorers = {
        (name, kind): TopicScorer().fit([(directory / "truth" / name / "topic.txt").read_text()])
        for name in topics
        for kind in kinds
    }
    hasher = scorers[topics[0], "whole"].counter_.hasher
    urls: list[str] = []
    scores: dict[tuple[str, str], list[float]] = {key: [] for key in scorers}
    # every topic's links.tsv is the same graph
    pages = bfs_files(directory / "truth" / topics[0], directory / "hosts.tsv")
    for url, _, file in islice(pages, limit):
        body = file.read_bytes()
        analysis = analyze(body, url=url, charset=None, x_robots_tag=None, counter=hasher)
        title = analysis.title or ""
        counts = Rows.of(hasher.count([f"{title} {whole_text(body)}", f"{title} {analysis.text}"]))
        urls.append(url)
        for (name, kind), scorer in scorers.items():
            page = counts.rows(kinds.index(kind), kinds.index(kind) + 1)
            scorer.partial_fit_counts(page)  # as the processor does, before scoring the page
            scores[name, kind].append(float(scorer.score_counts(page)[0]))
    results: list[dict[str, object]] = []
    for name in topics:
        for truth in ("truth", "truth-main"):
            truth_dir = directory / truth / name
            threshold = float((truth_dir / "threshold.txt").read_text())
            with (truth_dir / "pages.tsv").open() as lines:
                next(lines)
                value = dict(line.rstrip("\n").split("\t") for line in lines)
            relevant = np.array([float(value[url]) >= threshold for url in urls])
            result: dict[str, object] = {"topic": name, "truth": truth, "pages": len(urls)}
            result["relevant"] = n_relevant = int(relevant.sum())
            for kind in kinds:
                if not 0 < n_relevant < len(urls):  # neither figure has a meaning
                    result[f"auc_{kind}"] = result[f"r_precision_{kind}"] = math.nan
                    continue
                score = np.array(scores[name, kind])
                top = np.argsort(-score, kind="stable")[:n_relevant]
                result[f"auc_{kind}"] = round(float(roc_auc_score(relevant, score)), 4)
                result[f"r_precision_{kind}"] = round(float(relevant[top].mean()), 4)
            results.append(result)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", type=Path, default=Path("/tmp/realweb"))
    parser.add_argument("--truth", default="git", help="ground truth (topic) under DIR/truth")
    parser.add_argument("--pages", type=int, default=4000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--topic", default="solar energy")
    parser.add_argument("--json", action="store_true", help="one JSON line, no table")
    parser.add_argument(
        "--rank", nargs="+", metavar="TOPIC", help="rank by whole and main text (see above)"
    )
    args = parser.parse_args()
    if args.rank:
        results = rank(args.dir, args.rank, args.pages)
        if args.json:
            print(json.dumps(results))
            return
        print(f"{results[0]['pages']} pages; ROC AUC and precision at R, whole / main text")
        for row in results:
            print(
                f"{row['topic']:<8} {row['truth']:<11} R={row['relevant']:<5} "
                f"AUC {row['auc_whole']:.4f} / {row['auc_main']:.4f}  "
                f"R-precision {row['r_precision_whole']:.4f} / {row['r_precision_main']:.4f}"
            )
        return

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
