"""Throughput side by side: this crawler (fetch, parse, score, store), a Scrapy spider
that follows every link, and a minimal aiohttp + selectolax loop, on the same testbed.

Politeness is off for all three but robots.txt, which all three obey (no delay, many
requests per host). All count the same unit: distinct HTML pages answered with 200. The
testbed runs in its own process; each run is a fresh process. Runs are interleaved
(the order rotates from run to run) and the medians reported. Each web is crawled to the
end, or to --max-pages (requests, robots.txt aside, for Scrapy and the minimal loop;
URLs visited for this crawler).

    pip install -e ".[bench]"
    python bench/throughput.py --sizes 10000 100000 --runs 3 --out bench/results/throughput.json

With --seeds-file it crawls a web served already instead of the testbed, kept to the
hosts of those seeds (the real web of `bench/realweb/`):

    python bench/throughput.py --seeds-file /tmp/realweb/seeds.txt --kinds crawler minimal

`--kinds crawler crawler-warc` measures the cost of writing WARC files (`--warc`);
`--kinds crawler crawler-one-processor` that of analysing pages on the event loop instead
of in a worker process per core; `--kinds crawler crawler-qlearning` that of the
Q-learning frontier against best-first's.

The JSON keeps every run with its samples.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from testbed_process import cpu_seconds, served_testbed_process  # noqa: E402

from bench.harness import rotated  # noqa: E402

PORT = 18_431
KINDS = (
    "crawler",
    "crawler-one-processor",
    "crawler-warc",
    "crawler-qlearning",
    "scrapy",
    "minimal",
)
DEFAULT_KINDS = ["crawler", "scrapy", "minimal"]


def measure(
    kind: str, seed: str, hosts: list[str], max_pages: int, concurrency: int, server: int | None
) -> dict:
    """One run; with the testbed's `server` process, the CPU time it spent serving it."""
    with tempfile.TemporaryDirectory() as scratch:
        db = f"sqlite+aiosqlite:///{scratch}/bench.db"
        command = [sys.executable, str(HERE / "measure.py"), kind, seed, str(max_pages)]
        served_before = None if server is None else cpu_seconds(server)
        output = subprocess.run(
            [*command, str(concurrency), db, *hosts], capture_output=True, text=True, check=True
        ).stdout
    result = json.loads(output.strip().splitlines()[-1])
    if server is not None and served_before is not None:
        result["server_cpu_seconds"] = cpu_seconds(server) - served_before
    return result


def summarize(runs: list[dict]) -> dict:
    return {
        "runs": len(runs),
        "pages": statistics.median(r["pages"] for r in runs),
        "pages_per_second": statistics.median(r["pages"] / r["seconds"] for r in runs),
        "cpu_ms_per_page": statistics.median(1000 * r["cpu_seconds"] / r["pages"] for r in runs),
        "peak_rss_mb": statistics.median(r["peak_rss_mb"] for r in runs),
        # the machine's cores the crawler and the testbed's server kept busy together
        "cores_busy": statistics.median(
            (r["cpu_seconds"] + r["server_cpu_seconds"]) / r["seconds"] for r in runs
        )
        if all("server_cpu_seconds" in r for r in runs)
        else None,
    }


def print_table(size: int | str, runs: dict[str, list[dict]]) -> None:
    """Each kind's medians; then each of this crawler's kinds against the other crawlers
    and against its defaults, as the median of the ratios of runs made in the same
    round (the machine's speed drifts between rounds more than between neighbouring
    runs)."""
    summary = {kind: summarize(kind_runs) for kind, kind_runs in runs.items()}
    print(f"\n{f'testbed of {size:,} pages' if isinstance(size, int) else size}; medians")
    print(
        f"{'':22} {'runs':>4} {'pages':>8} {'pages/s':>8} {'CPU ms/page':>11} {'peak MB':>8}"
        f" {'cores busy':>10}"
    )
    for kind, row in summary.items():
        cores = "" if row["cores_busy"] is None else f"{row['cores_busy']:10.2f}"
        print(
            f"{kind:22} {row['runs']:4} {row['pages']:8.0f} {row['pages_per_second']:8.0f} "
            f"{row['cpu_ms_per_page']:11.2f} {row['peak_rss_mb']:8.0f} {cores}"
        )
    mine = [kind for kind in runs if kind.startswith("crawler")]
    for kind in mine:
        for other in [o for o in runs if o not in mine or (o == "crawler" != kind)]:
            pairs = list(zip(runs[kind], runs[other], strict=False))
            print(
                f"{kind} / {other}, by round: "
                + ", ".join(
                    f"{statistics.median(ratio(a, b) for a, b in pairs):.2f}x {name}"
                    for name, ratio in RATIOS.items()
                )
            )


RATIOS = {
    "pages/s": lambda a, b: (a["pages"] / a["seconds"]) / (b["pages"] / b["seconds"]),
    "CPU per page": lambda a, b: (a["cpu_seconds"] / a["pages"]) / (b["cpu_seconds"] / b["pages"]),
    "peak memory": lambda a, b: a["peak_rss_mb"] / b["peak_rss_mb"],
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000], help="testbed pages")
    parser.add_argument("--hosts", type=int, default=6)
    parser.add_argument("--max-pages", type=int, help="stop each run here (default: at the end)")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--kinds", nargs="+", choices=KINDS, default=DEFAULT_KINDS)
    parser.add_argument("--out", type=Path, help="write every run here, as JSON")
    parser.add_argument("--seeds-file", type=Path, help="crawl the web these seeds are on")
    args = parser.parse_args()
    if args.seeds_file:
        seeds = args.seeds_file.read_text().split()
        hosts = sorted({urlsplit(url).hostname or "" for url in seeds})
        runs = run_interleaved(args, str(args.seeds_file), hosts, args.max_pages or 0, None)
        print_table(str(args.seeds_file), runs)
        write_results(args, {str(args.seeds_file): runs})
        return

    results: dict[str, dict[str, list[dict]]] = {}
    for size in args.sizes:
        max_pages = args.max_pages or 0  # 0: to the end of the web
        testbed = served_testbed_process(port=PORT, pages=size, hosts=args.hosts)
        with testbed as (seed, hosts, server):
            runs = run_interleaved(args, seed, hosts, max_pages, server.pid)
        results[str(size)] = runs
        print_table(size, runs)
        write_results(args, results)  # after every size: a long run keeps what it has


def run_interleaved(
    args: argparse.Namespace, seed: str, hosts: list[str], max_pages: int, server: int | None
) -> dict[str, list[dict]]:
    """args.runs runs of each kind, the order rotating from run to run; `server` is the
    testbed's process, if it serves the web."""
    runs: dict[str, list[dict]] = {kind: [] for kind in args.kinds}
    for run in range(args.runs):
        for kind in rotated(args.kinds, run):
            result = measure(kind, seed, hosts, max_pages, args.concurrency, server)
            runs[kind].append(result)
            brief = {k: v for k, v in result.items() if k != "samples"}
            print(json.dumps({"web": seed, **brief}), file=sys.stderr, flush=True)
    return runs


def write_results(args: argparse.Namespace, results: dict[str, dict[str, list[dict]]]) -> None:
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        settings = vars(args) | {"out": str(args.out), "seeds_file": str(args.seeds_file)}
        args.out.write_text(json.dumps({"settings": settings, "results": results}))


if __name__ == "__main__":
    main()
