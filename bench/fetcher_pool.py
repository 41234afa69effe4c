"""Sizing the fetcher pool on the loopback testbed: fixed pools, a latency rule, mm1k, mdp.

The testbed runs in its own process and serves each page after an exponential delay
(--latency, mean seconds): one fetcher's arrival rate is about 1 / latency. Pages are
heavy (--paragraphs) so the processor's cost is real. Each configuration crawls for
--duration seconds, politeness off, runs interleaved. The measured cost is the paper's:
gamma * (fraction of time the processor idled) + losses per second, with one gamma for
all: gamma(K) = mu (K + 2) / K for the mu measured in a first, calibrating run.

    python bench/fetcher_pool.py [--latency 0.1] [--duration 15] [--runs 3]
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

HERE = Path(__file__).resolve().parent
PORT = 18_533


def measure(
    seed: str, hosts: list[str], args: argparse.Namespace, fetchers: str, gamma: str
) -> dict:
    with tempfile.TemporaryDirectory() as scratch:
        output = subprocess.run(
            [
                sys.executable,
                str(HERE / "measure_pool.py"),
                seed,
                f"sqlite+aiosqlite:///{scratch}/pool.db",
                str(args.duration),
                str(args.buffer),
                str(args.concurrency),
                fetchers,
                gamma,
                *hosts,
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
    args = parser.parse_args()

    with served_testbed(
        port=PORT,
        pages=args.pages,
        hosts=args.hosts,
        options=["--latency", str(args.latency), "--paragraphs", str(args.paragraphs)],
    ) as (
        seed,
        hosts,
    ):
        calibration = measure(seed, hosts, args, "mm1k", "auto")
        gamma = calibration["service_rate"] * (args.buffer + 2) / args.buffer
        print(
            f"calibration: mu {calibration['service_rate']:.0f}/s, so gamma = gamma(K) = "
            f"{gamma:.0f}",
            file=sys.stderr,
            flush=True,
        )
        configurations = [f"fixed:{n}" for n in args.fixed] + ["latency", "mm1k", "mdp"]
        results: dict[str, list[dict]] = {name: [] for name in configurations}
        for run in range(args.runs):
            order = configurations if run % 2 == 0 else configurations[::-1]
            for name in order:
                result = measure(seed, hosts, args, name, f"{gamma:.6g}")
                results[name].append(result)
                print(json.dumps(result), file=sys.stderr, flush=True)

    print(
        f"testbed: latency {args.latency} s (so lambda about {1 / args.latency:.1f}/s per "
        f"fetcher), {args.paragraphs} paragraphs a page; K = {args.buffer}; gamma = "
        f"{gamma:.0f}; {args.runs} runs of {args.duration:.0f} s each; medians"
    )
    print(
        f"{'pool':>10} {'cost':>8} {'idle':>6} {'losses/s':>9} {'pages/s':>8} "
        f"{'lambda^':>8} {'mu^':>6} {'mu seen':>8} {'target':>7}"
    )
    for name, runs in results.items():

        def median(key, runs=runs):  # type: ignore[no-untyped-def]
            return statistics.median(key(r) for r in runs)

        idle = median(lambda r: r["idle_seconds"] / r["seconds"])
        losses = median(lambda r: r["losses"] / r["seconds"])
        cost = median(
            lambda r: gamma * r["idle_seconds"] / r["seconds"] + r["losses"] / r["seconds"]
        )
        rate = median(lambda r: r["pages"] / r["seconds"])
        arrival = median(lambda r: r["arrival_rate"] or float("nan"))
        service = median(lambda r: r["service_rate"] or float("nan"))
        # the processor's rate while busy, as seen from outside: pages over busy time
        seen = median(lambda r: r["pages"] / max(r["seconds"] - r["idle_seconds"], 1e-9))
        target = median(lambda r: r["final_target"])
        print(
            f"{name:>10} {cost:8.1f} {idle:6.2f} {losses:9.2f} {rate:8.0f} {arrival:8.1f} "
            f"{service:6.0f} {seen:8.0f} {target:7.0f}"
        )


if __name__ == "__main__":
    main()
