"""How much work the machine's cores do together: the same pure-Python loop run in one
process, then in one process per core at once, alternating; medians.

A crawl with a worker process per core is compared with a minimal loop on one core:
where the cores share one physical core (or its cache, or the host's time), each
process of a busy machine runs slower, its CPU time a page grows, and a second core
adds less than a second core's work.

    python bench/parallel_speed.py --rounds 5
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

LOOP = "s = 0\nfor i in range({steps}): s += i"


def run(processes: int, steps: int) -> list[float]:
    """Wall seconds of each of `processes` loops started together."""
    code = f"import time\nt = time.perf_counter()\n{LOOP.format(steps=steps)}\n"
    code += "print(time.perf_counter() - t)"
    started = [
        subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
        for _ in range(processes)
    ]
    return [float(process.communicate()[0]) for process in started]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=20_000_000, help="additions a loop makes")
    parser.add_argument("--processes", type=int, default=len(os.sched_getaffinity(0)))
    args = parser.parse_args()
    alone, together = [], []
    for _ in range(args.rounds):
        alone.append(run(1, args.steps)[0])
        together.append(max(run(args.processes, args.steps)))
        time.sleep(0.5)
    # the work of n loops done in the time they took together, against one loop's
    speedups = [args.processes * a / t for a, t in zip(alone, together, strict=True)]
    print(
        json.dumps(
            {
                "processes": args.processes,
                "alone_seconds": round(statistics.median(alone), 2),
                "together_seconds": round(statistics.median(together), 2),
                "speedup": round(statistics.median(speedups), 2),
                "speedups": [round(s, 2) for s in speedups],
            }
        )
    )


if __name__ == "__main__":
    main()
