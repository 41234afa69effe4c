"""Where one crawl's threads spend their time on the machine they share: each thread's
CPU time and the time it waited on the run queue, runnable but not running (from
/proc/PID/task/TID/schedstat), for the crawl's process, its worker processes and the
web server's processes, read every half second while the crawl runs.

    python bench/run_queue.py --seeds-file /tmp/realweb/seeds.txt [--kind crawler]

A thread that waits on the run queue for much of the crawl waits for a core: then the
cores are full, whatever share of the time they were busy, and only less CPU a page,
not more overlap, makes the crawl faster. The crawl is `bench/measure.py`'s, to its end.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

HERE = Path(__file__).resolve().parent
EVERY = 0.5  # seconds between readings

# (pid, thread id) -> (its name, CPU seconds, run-queue seconds)
Threads = dict[tuple[int, int], tuple[str, float, float]]


def thread_times(pid: int, *, children: bool = True) -> Threads:
    """Each thread of `pid` (and of its children, theirs) so far: its name, its CPU time
    and its time waiting on the run queue, in seconds. A process that ended has none."""
    found: Threads = {}
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError, ValueError):
                name = Path(f"/proc/{pid}/task/{task}/comm").read_text().strip()
                name = f"{name} (main)" if int(task) == pid else f"{name} {task}"
                cpu, waited, _ = Path(f"/proc/{pid}/task/{task}/schedstat").read_text().split()
                found[(pid, int(task))] = (name, int(cpu) / 1e9, int(waited) / 1e9)
            if children:
                with contextlib.suppress(OSError):
                    for child in Path(f"/proc/{pid}/task/{task}/children").read_text().split():
                        found |= thread_times(int(child))
    return found


def pids_of(pattern: str) -> list[int]:
    """The processes whose command line matches `pattern` (pgrep -f)."""
    found = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True).stdout
    return [int(pid) for pid in found.split()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds-file", type=Path, required=True)
    parser.add_argument("--kind", default="crawler", help="bench/measure.py's KIND")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--server", default="nginx: worker", help="the web server's pgrep -f")
    args = parser.parse_args()
    hosts = sorted({urlsplit(url).hostname or "" for url in args.seeds_file.read_text().split()})
    servers = pids_of(args.server)
    server_before = {k: v for pid in servers for k, v in thread_times(pid).items()}
    last: Threads = {}
    with tempfile.TemporaryDirectory() as scratch:
        crawl = subprocess.Popen(
            [
                *(sys.executable, str(HERE / "measure.py"), args.kind, str(args.seeds_file)),
                *("0", str(args.concurrency), f"sqlite+aiosqlite:///{scratch}/run.db", *hosts),
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        while crawl.poll() is None:
            last |= thread_times(crawl.pid)  # a thread's last reading before it ended
            time.sleep(EVERY)
        assert crawl.stdout is not None
        measured = json.loads(crawl.stdout.read().strip().splitlines()[-1])
    server_after = {k: v for pid in servers for k, v in thread_times(pid).items()}
    seconds = measured["seconds"]
    # (process, thread, CPU seconds, run-queue seconds)
    rows: list[tuple[str, str, float, float]] = [
        ("crawl" if pid == crawl.pid else f"child {pid}", name, cpu, waited)
        for (pid, _), (name, cpu, waited) in sorted(last.items(), key=lambda kv: -kv[1][1])
    ]
    server_cpu = sum(v[1] - server_before.get(k, v)[1] for k, v in server_after.items())
    server_waited = sum(v[2] - server_before.get(k, v)[2] for k, v in server_after.items())
    rows.append(("server", args.server, server_cpu, server_waited))
    print(f"{args.kind}: {measured['pages']} pages in {seconds:.1f} s")
    header = ("process", "thread", "CPU s", "share", "run queue s", "share")
    print("{:>12} {:<24} {:>7} {:>6} {:>12} {:>6}".format(*header))
    for process, thread, cpu, waited in rows:
        if cpu + waited >= 0.01 * seconds:
            print(
                f"{process:>12} {thread[:24]:<24} {cpu:7.1f} {cpu / seconds:6.2f} "
                f"{waited:12.1f} {waited / seconds:6.2f}"
            )
    busy = sum(row[2] for row in rows) / seconds
    waiting = sum(row[3] for row in rows) / seconds
    print(f"cores busy {busy:.2f}; threads waiting for a core, on average, {waiting:.2f}")
    fields = ("process", "thread", "cpu_seconds", "run_queue_seconds")
    threads = [dict(zip(fields, row, strict=True)) for row in rows]
    print(json.dumps({"seconds": seconds, "pages": measured["pages"], "threads": threads}))


if __name__ == "__main__":
    main()
