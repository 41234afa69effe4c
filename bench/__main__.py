"""`python -m bench NAME [ARGS]`: run one benchmark; without a name, list them."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

# name: (script, what it measures)
BENCHMARKS = {
    "throughput": ("throughput.py", "pages/s and CPU a page beside Scrapy and minimal loops"),
    "focus": ("focus.py", "recall and harvest of each frontier policy on a web with a truth"),
    "rounds": ("pool_focus_rounds.py", "focus runs pooled by topic: behind or ahead of best-first"),
    "pool": ("fetcher_pool.py", "the fetcher pool's policies side by side"),
    "pool-solver": ("pool_solver.py", "time to solve the pool's MDP"),
    "revisits": ("revisits.py", "worth collected a period under each re-visit policy"),
    "soak": ("soak.py", "a long crawl of many hosts, sampled as it runs"),
    "many-hosts": ("manyhosts.py", "polite crawls of 1,000s of hosts on loopback, one nginx"),
    "cluster": ("cluster.py", "daemons sharing one crawl through PostgreSQL"),
    "page-cost": ("page_cost.py", "CPU of the processor's work on one real page"),
    "search": ("search.py", "main text and search: CPU a page, latency, precision at 10"),
    "labels": ("labels.py", "F1 and harvest after labels the crawler asked for, or random"),
    "api": ("api.py", "the daemon API's latency, and pages/s with the web page open"),
    "conformance": ("conformance.py", "URLs and robots.txt against the public test suites"),
    "frontier-memory": ("frontier_memory.py", "memory of the frontier's queue in memory"),
    "host-memory": ("host_state_memory.py", "memory of per-host state as hosts grow"),
    "example-report": ("example_report.py", "the README's example report"),
    "realweb": ("realweb/realweb.py", "install, start and stop the real web on loopback"),
    "ground-truth": ("realweb/ground_truth.py", "the real web's ground truth from its files"),
    "fixture": ("realweb/make_fixture.py", "the tests' small real-HTML site and its truth"),
}


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        for name, (_script, what) in BENCHMARKS.items():
            print(f"  {name:<16}{what}")
        return
    name = sys.argv[1]
    if name not in BENCHMARKS:
        sys.exit(f"python -m bench: no benchmark {name!r} (known: {', '.join(BENCHMARKS)})")
    script = HERE / BENCHMARKS[name][0]
    sys.argv = [f"python -m bench {name}", *sys.argv[2:]]
    sys.path.insert(0, str(script.parent))  # the scripts import their neighbours
    runpy.run_path(str(script), run_name="__main__")


if __name__ == "__main__":
    main()
