"""Time to solve the fetcher-pool MDP (relative value iteration) for the paper's
largest Table 1 instances, several runs: the model and its solution (what a crawl pays),
and apart from them the stationary distribution (which `crawler plan fetchers` reports).

    python bench/pool_solver.py [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

from policies.pool.fetcher_mdp import PoolModel, relative_value_iteration

# lambda, K, gamma, N_s (mu = 1): the Table 1 rows with the most states
INSTANCES = [(0.01, 15, 2.4, 107), (0.01, 15, 0.4, 91), (0.01, 10, 2.4, 110), (0.01, 5, 2.4, 114)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print(
        f"{'lambda':>7} {'K':>3} {'gamma':>6} {'N':>4} {'states':>7} {'iterations':>10} "
        f"{'median s':>9} {'stationary s':>12}"
    )
    for arrival, buffer, gamma, fetchers in INSTANCES:
        times, stationary_times = [], []
        for _ in range(args.runs):
            started = time.perf_counter()
            model = PoolModel(
                arrival_rate=arrival,
                service_rate=1.0,
                buffer=buffer,
                fetchers=fetchers,
                gamma=gamma,
            )
            policy = relative_value_iteration(model)
            solved = time.perf_counter()
            policy.stationary  # noqa: B018 (computed when first read)
            times.append(solved - started)
            stationary_times.append(time.perf_counter() - solved)
        print(
            f"{arrival:7.2f} {buffer:3d} {gamma:6.2f} {fetchers:4d} {model.q.size:7d} "
            f"{policy.iterations:10d} {statistics.median(times):9.3f} "
            f"{statistics.median(stationary_times):12.3f}"
        )


if __name__ == "__main__":
    main()
