"""Memory of the frontier's queue in memory: the Python heap a policy holds for URLs
pushed as a crawl pushes them (ids, URLs and scores of their own, one copy of each
host's name), traced by tracemalloc, and the time a push and a pop take.

The candidates alone are traced first, then the policy's queue with them (its entries,
and each new URL's entry by its id, which tell the bounded frontier what memory holds
and let a URL's score be raised). Each run is a process of its own; medians.

    python bench/frontier_memory.py --urls 100000 --hosts 6 100000 --runs 3
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
import tracemalloc

from policies import Candidate, make_frontier_policy


def measure(policy: str, urls: int, hosts: int) -> dict[str, float]:
    names = [f"127.0.{h // 250}.{h % 250 + 1}:8800" for h in range(hosts)]
    tracemalloc.start()
    candidates = [
        Candidate(
            10**6 + i,
            f"http://{names[i % hosts]}/p/{i * 7919 % 1_000_003}",
            names[i % hosts],
            3,
            (i % 97) / 101,
        )
        for i in range(urls)
    ]
    alone = tracemalloc.get_traced_memory()[0]
    frontier = make_frontier_policy(policy)
    started = time.perf_counter()
    for candidate in candidates:
        frontier.push(candidate)
    pushed = time.perf_counter() - started
    held = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    started = time.perf_counter()
    while frontier.pop(lambda host: True) is not None:
        pass
    popped = time.perf_counter() - started
    return {
        "candidates_mb": alone / 2**20,
        "held_mb": held / 2**20,
        "bytes_per_url": held / urls,
        "push_us": 1e6 * pushed / urls,
        "pop_us": 1e6 * popped / urls,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--urls", type=int, default=100_000)
    parser.add_argument("--hosts", type=int, nargs="+", default=[6, 100_000])
    parser.add_argument("--policy", default="best-first")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)  # a run
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args.policy, args.urls, args.hosts[0])))
        return
    print(f"{args.policy}, {args.urls:,} URLs; medians of {args.runs} runs")
    columns = ("candidates MB", "held MB", "B/URL", "push us", "pop us")
    print(f"{'hosts':>8} " + " ".join(f"{name:>13}" for name in columns))
    for hosts in args.hosts:
        runs = [
            json.loads(
                subprocess.run(
                    [
                        sys.executable,
                        __file__,
                        "--one",
                        "--policy",
                        args.policy,
                        "--urls",
                        str(args.urls),
                        "--hosts",
                        str(hosts),
                    ],
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout
            )
            for _ in range(args.runs)
        ]
        row = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
        values = (row["candidates_mb"], row["held_mb"], row["bytes_per_url"])
        print(
            f"{hosts:8,} "
            + " ".join(f"{value:13.1f}" for value in values)
            + f" {row['push_us']:13.2f} {row['pop_us']:13.2f}"
        )


if __name__ == "__main__":
    main()
