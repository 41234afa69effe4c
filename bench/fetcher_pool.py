"""Sizing the fetcher pool: fixed pools, a latency rule, mm1k and mdp, side by side.

On the loopback testbed (the default: it runs in its own process and serves each page
after an exponential delay, --latency mean seconds, so one fetcher's arrival rate is
about 1 / latency; pages are heavy, --paragraphs, so the processor's cost is real), or
on a real web given by --seeds-file (the real-HTML benchmark web: bench/realweb/).
Each configuration crawls for --duration seconds or --max-pages pages, politeness off,
runs interleaved. The measured cost is the paper's: gamma * (fraction of time the
processor idled) + arrivals at a full queue per second (blocked, or lost with
--full-queue drop), with one gamma for all: gamma(K, c) (mu (K + 2) / K for one
server) for the mu measured in a first, calibrating run. Requests per stored page are
counted by the crawler's own request counter.

    python bench/fetcher_pool.py [--latency 0.1] [--duration 15] [--runs 3]
    python bench/fetcher_pool.py --seeds-file /tmp/realweb/seeds.txt --max-pages 8000 \
        --buffer 16 --fixed 64 --runs 3
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from testbed_process import served_testbed

from policies.pool.mm1k import critical_gamma

HERE = Path(__file__).resolve().parent
PORT = 18_533


def measure(
    seeds: list[str], hosts: list[str], args: argparse.Namespace, fetchers: str, gamma: str
) -> dict:
    limit = ["--max-pages", str(args.max_pages)] if args.max_pages else []
    with tempfile.TemporaryDirectory() as scratch:
        output = subprocess.run(
            [
                sys.executable,
                str(HERE / "measure_pool.py"),
                *("--seeds", *seeds),
                *("--hosts", *hosts),
                *("--db", f"sqlite+aiosqlite:///{scratch}/pool.db"),
                *("--duration", str(args.duration), *limit),
                *("--buffer", str(args.buffer), "--concurrency", str(args.concurrency)),
                *("--fetchers", fetchers, "--gamma", gamma, "--full-queue", args.full_queue),
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    return json.loads(output.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pages", type=int, default=50_000)
    parser.add_argument("--hosts", type=int, default=12)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--paragraphs", type=int, default=30)
    parser.add_argument("--buffer", type=int, default=8)
    parser.add_argument("--concurrency", type=int, default=64, help="most fetchers allowed")
    parser.add_argument("--duration", type=float, default=15.0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--fixed", type=int, nargs="+", default=[4, 8, 16, 32])
    parser.add_argument("--seeds-file", type=Path, help="crawl this web, not the testbed")
    parser.add_argument("--max-pages", type=int, help="stop each crawl here too")
    parser.add_argument("--full-queue", default="block", choices=["block", "drop"])
    args = parser.parse_args()

    if args.seeds_file:
        seeds = [line.strip() for line in args.seeds_file.read_text().splitlines()]
        seeds = [seed for seed in seeds if seed and not seed.startswith("#")]
        hosts = sorted({seed.split("//", 1)[1].split("/", 1)[0].split(":")[0] for seed in seeds})
        results, gamma = run_all(seeds, hosts, args)
        web = f"{args.seeds_file} ({len(seeds)} seeds)"
    else:
        options = ["--latency", str(args.latency), "--paragraphs", str(args.paragraphs)]
        with served_testbed(port=PORT, pages=args.pages, hosts=args.hosts, options=options) as (
            seed,
            hosts,
        ):
            results, gamma = run_all([seed], hosts, args)
        web = (
            f"testbed: latency {args.latency} s (so lambda about {1 / args.latency:.1f}/s "
            f"per fetcher), {args.paragraphs} paragraphs a page"
        )
    print_table(results, gamma, web, args)


def run_all(
    seeds: list[str], hosts: list[str], args: argparse.Namespace
) -> tuple[dict[str, list[dict]], float]:
    calibration = measure(seeds, hosts, args, "mm1k", "auto")
    gamma = critical_gamma(
        buffer=args.buffer,
        service_rate=calibration["service_rate"],
        servers=calibration["servers"],
    )
    print(
        f"calibration: mu {calibration['service_rate']:.0f}/s a server, "
        f"{calibration['servers']} servers, so gamma = gamma(K, c) = {gamma:.0f}",
        file=sys.stderr,
        flush=True,
    )
    configurations = [f"fixed:{n}" for n in args.fixed] + ["latency", "mm1k", "mdp"]
    results: dict[str, list[dict]] = {name: [] for name in configurations}
    for run in range(args.runs):
        order = configurations if run % 2 == 0 else configurations[::-1]
        for name in order:
            result = measure(seeds, hosts, args, name, f"{gamma:.6g}")
            results[name].append(result)
            print(json.dumps(result), file=sys.stderr, flush=True)
    return results, gamma


def print_table(
    results: dict[str, list[dict]], gamma: float, web: str, args: argparse.Namespace
) -> None:
    print(
        f"{web}; K = {args.buffer}; gamma = {gamma:.0f}; full queue: {args.full_queue}; "
        f"{args.runs} runs each; medians"
    )
    print(
        f"{'pool':>10} {'cost':>8} {'idle':>6} {'full/s':>7} {'blocked':>8} {'req/page':>9} "
        f"{'pages/s':>8} {'lambda^':>8} {'mu^':>6} {'mu seen':>8} {'target':>7}"
    )
    for name, runs in results.items():

        def median(key, runs=runs):  # type: ignore[no-untyped-def]
            return statistics.median(key(r) for r in runs)

        def full(r: dict) -> float:  # arrivals at a full queue: blocked, or lost
            return (r["blocked"] + r["losses"]) / r["seconds"]

        idle = median(lambda r: r["idle_seconds"] / r["seconds"])
        cost = median(lambda r: gamma * r["idle_seconds"] / r["seconds"] + full(r))
        # the share of fetcher time spent holding a page at a full queue
        blocked = median(lambda r: r["blocked_seconds"] / r["seconds"])
        per_page = median(lambda r: r["requests"] / max(r["stored"], 1))
        rate = median(lambda r: r["stored"] / r["seconds"])
        arrival = median(lambda r: r["arrival_rate"] or float("nan"))
        service = median(lambda r: r["service_rate"] or float("nan"))
        # a server's rate while busy, as seen from outside: pages over busy server-time
        seen = median(
            lambda r: r["pages"] / max(r["servers"] * (r["seconds"] - r["idle_seconds"]), 1e-9)
        )
        target = median(lambda r: r["final_target"])
        print(
            f"{name:>10} {cost:8.1f} {idle:6.2f} {median(full):7.2f} {blocked:8.2f} "
            f"{per_page:9.3f} {rate:8.0f} {arrival:8.1f} {service:6.0f} {seen:8.0f} {target:7.0f}"
        )


if __name__ == "__main__":
    main()
