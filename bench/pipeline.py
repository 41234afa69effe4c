"""Throughput of the whole pipeline (fetch, parse, score, store) on the loopback testbed,
beside a minimal aiohttp + selectolax loop that only fetches and extracts links.

Politeness is off for both (no delay, many requests per host). The testbed runs in its
own process. Runs alternate between the two, and the medians are reported.

    python bench/pipeline.py [--pages 20000] [--max-pages 5000] [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from testbed_process import served_testbed  # noqa: E402

PORT = 18_431


def measure(kind: str, seed: str, hosts: list[str], args: argparse.Namespace) -> dict:
    with tempfile.TemporaryDirectory() as scratch:
        db = f"sqlite+aiosqlite:///{scratch}/bench.db"
        output = subprocess.run(
            [
                sys.executable,
                str(HERE / "measure.py"),
                kind,
                seed,
                str(args.max_pages),
                str(args.concurrency),
                db,
                *hosts,
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    return json.loads(output.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pages", type=int, default=20_000, help="size of the testbed")
    parser.add_argument("--hosts", type=int, default=6)
    parser.add_argument("--max-pages", type=int, default=5_000, help="pages fetched per run")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    with served_testbed(port=PORT, pages=args.pages, hosts=args.hosts) as (
        seed,
        hosts,
    ):
        results: dict[str, list[dict]] = {"crawler": [], "minimal": []}
        for run in range(args.runs):
            for kind in ("crawler", "minimal") if run % 2 == 0 else ("minimal", "crawler"):
                result = measure(kind, seed, hosts, args)
                results[kind].append(result)
                print(json.dumps(result), file=sys.stderr, flush=True)

    def median(kind: str, key: str) -> float:
        return statistics.median(r[key] for r in results[kind])

    print(
        f"testbed {args.pages} pages on {args.hosts} hosts; {args.max_pages} pages a run; "
        f"concurrency {args.concurrency}; {args.runs} runs each; medians"
    )
    print(f"{'':10} {'pages/s':>9} {'CPU ms/page':>12} {'peak MB':>8}")
    rows = {}
    for kind in ("crawler", "minimal"):
        rate = statistics.median(r["pages"] / r["seconds"] for r in results[kind])
        cpu = statistics.median(1000 * r["cpu_seconds"] / r["pages"] for r in results[kind])
        rows[kind] = (rate, cpu, median(kind, "peak_rss_mb"))
        print(f"{kind:10} {rate:9.0f} {cpu:12.2f} {rows[kind][2]:8.0f}")
    print(
        f"crawler / minimal: {rows['crawler'][0] / rows['minimal'][0]:.2f}x pages/s, "
        f"{rows['crawler'][1] / rows['minimal'][1]:.2f}x CPU per page"
    )


if __name__ == "__main__":
    main()
