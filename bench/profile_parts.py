"""Where a crawl's CPU goes, part by part of a page's work: py-spy samples one crawl
(`bench/measure.py`, every thread of the crawl's process and of its workers) of the
testbed, served by a process of its own, or of a web served already (`--seeds-file`);
each sample goes to the part that the innermost frame of its stack with a known file
belongs to. py-spy takes some waits for work (a thread in `select`, a worker reading its
next job, aiosqlite's thread waiting for a call), which are left out as idle, and it
counts a thread as active while it waits for a core or for its interpreter's lock, so
the samples add up to more than the CPU time: each part's milliseconds a page are the
crawl's CPU a page (its process and workers) shared out in proportion to its samples.
With the testbed's server's CPU a page, it also prints the most pages a second the
machine's cores allow a crawler that spends that much beside the server.

    pip install -e ".[bench]"   # py-spy
    python bench/profile_parts.py --pages 10000 [--kind crawler] [--rate 200]
    python bench/profile_parts.py --seeds-file /tmp/realweb/seeds.txt --concurrency 64
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from testbed_process import cpu_seconds, served_testbed_process  # noqa: E402

PORT = 18_433
# A frame belongs to the first part one of whose path fragments its file holds.
PARTS = (
    ("counting terms", ("policies/terms.py",)),
    (
        "parsing, links, scope",
        ("pipeline/parse.py", "selectolax", "net/urls.py", "net/scope.py", "yarl"),
    ),
    ("the processor: scoring, link estimates", ("policies/relevance.py", "pipeline/processor.py")),
    (
        "hand-over to workers",
        ("pipeline/analysis_pool.py", "pipeline/analysis_worker.py", "pickle"),
    ),
    ("frontier", ("policies/frontier.py", "policies/host_queue.py", "pipeline/frontier_store.py")),
    (
        "storage (writer, SQLite)",
        (
            "pipeline/write_loop.py",
            "pipeline/writer.py",
            "storage/",
            "sqlalchemy",
            "sqlite3",
            "aiosqlite",
        ),
    ),
    (
        "fetching (aiohttp, the visit)",
        ("aiohttp", "multidict", "net/fetcher.py", "net/visit.py", "net/exchange.py"),
    ),
    (
        "fetcher pool's models",
        ("policies/fetcher_mdp.py", "policies/fetcher_pool.py", "policies/mm1k.py"),
    ),
    ("engine (dispatch, settling, feedback)", ("crawler/engine/",)),
    ("the event loop's own", ("asyncio/",)),
)
FRAME_FILE = re.compile(r"\((.*):\d+\)$")
# py-spy takes some waits for work: a sample whose innermost frame is one of these
# (function, file) waits for an event, a queue or the worker's next job, and is idle
IDLE = (
    ("select", "selectors.py"),
    ("wait", "threading.py"),
    ("get", "queue.py"),
    ("serve", "pipeline/analysis_worker.py"),  # reading the next job's frame
    ("_connection_worker_thread", "aiosqlite/core.py"),  # its queue's get, in C
)


def is_idle(stack: list[str]) -> bool:
    match = FRAME_FILE.search(stack[-1])
    if match is None:
        return False
    function = stack[-1].partition(" (")[0].rpartition(".")[2]
    return any(function == name and match.group(1).endswith(f) for name, f in IDLE)


def part_of(stack: list[str]) -> str:
    for frame in reversed(stack):
        match = FRAME_FILE.search(frame)
        if match is None:
            continue
        path = match.group(1)
        for name, fragments in PARTS:
            if any(fragment in path for fragment in fragments):
                return name
    return "other"


def thread_of(stack: list[str]) -> str:
    """The thread's name, its number and any `Thread-N` left out; a worker process's
    threads are named as the worker's."""
    thread = next((frame for frame in stack if frame.startswith("thread (")), "thread (?)")
    name = re.sub(r" ?Thread-\d+ ?", "", thread.partition("): ")[2]) or "(unnamed)"
    in_worker = any(f.startswith("process ") and "analysis_worker" in f for f in stack)
    return f"worker: {name}" if in_worker else name


def samples(raw: Path) -> tuple[Counter[str], Counter[str], int]:
    """The samples by part and by thread, and the idle ones left out. py-spy's raw
    format: a line a distinct stack, its frames split by ';' (the process and the
    thread first), then the count of its samples."""
    parts: Counter[str] = Counter()
    threads: Counter[str] = Counter()
    idle = 0
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack:
            continue
        frames = stack.split(";")
        if is_idle(frames):
            idle += int(count)
            continue
        parts[part_of(frames)] += int(count)
        threads[thread_of(frames)] += int(count)
    return parts, threads, idle


def profile(
    args: argparse.Namespace, seed: str, hosts: list[str], scratch: str
) -> tuple[dict, tuple[Counter[str], Counter[str], int]]:
    raw = args.raw or Path(scratch) / "profile.raw"
    db = f"sqlite+aiosqlite:///{scratch}/profile.db"
    measure = [sys.executable, str(HERE / "measure.py"), args.kind, seed, str(args.max_pages)]
    output = subprocess.run(
        [
            "py-spy",
            "record",
            "--rate",
            str(args.rate),
            "--subprocesses",
            "--threads",
            "--full-filenames",
            "--nonblocking",
            "--format",
            "raw",
            "--output",
            str(raw),
            "--",
            *measure,
            str(args.concurrency),
            db,
            *hosts,
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    result = json.loads([line for line in output.splitlines() if line.startswith("{")][-1])
    return result, samples(raw)


def report(
    result: dict,
    counted: tuple[Counter[str], Counter[str], int],
    rate: int,
    server_cpu: float | None,
) -> None:
    parts, threads, idle = counted
    pages = result["pages"]
    crawl_ms = 1000 * result["cpu_seconds"] / pages
    total = sum(parts.values())
    print(
        f"{pages} pages at {pages / result['seconds']:.0f} pages/s, {crawl_ms:.2f} ms of CPU a page"
    )
    print(
        f"{total} samples ({idle} more left out as idle): {total / rate:.1f} s of threads"
        f" sampled as active, for {result['cpu_seconds']:.1f} s of CPU"
    )
    print(f"{'part':40} {'samples':>8} {'share':>6} {'ms/page':>8}")
    for name, count in parts.most_common():
        print(f"{name:40} {count:8} {count / total:6.1%} {crawl_ms * count / total:8.3f}")
    print(f"{'thread':40} {'samples':>8} {'share':>6}")
    for name, count in threads.most_common():
        print(f"{name:40} {count:8} {count / total:6.1%}")
    if server_cpu is not None:
        server_ms = 1000 * server_cpu / pages
        cores = os.cpu_count() or 1
        bound = cores * 1000 / (crawl_ms + server_ms)
        print(
            f"the testbed's server {server_ms:.2f} ms a page; {cores} cores allow "
            f"at most {bound:.0f} pages/s at {crawl_ms:.2f} + {server_ms:.2f} ms a page"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pages", type=int, default=10_000, help="testbed pages")
    parser.add_argument("--hosts", type=int, default=6)
    parser.add_argument("--seeds-file", type=Path, help="crawl the web these seeds are on")
    parser.add_argument(
        "--kind",
        default="crawler",
        choices=("crawler", "crawler-one-processor", "crawler-qlearning"),
    )
    parser.add_argument("--max-pages", type=int, default=0, help="0: to the end of the web")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--rate", type=int, default=200, help="py-spy's samples a second")
    parser.add_argument("--raw", type=Path, help="keep py-spy's stacks here (its raw format)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        if args.seeds_file is not None:
            seeds = args.seeds_file.read_text().split()
            hosts = sorted({urlsplit(url).hostname or "" for url in seeds})
            result, counted = profile(args, str(args.seeds_file), hosts, scratch)
            report(result, counted, args.rate, None)
            return
        with served_testbed_process(port=PORT, pages=args.pages, hosts=args.hosts) as (
            seed,
            hosts,
            server,
        ):
            served_before = cpu_seconds(server.pid)
            result, counted = profile(args, seed, hosts, scratch)
            report(result, counted, args.rate, cpu_seconds(server.pid) - served_before)


if __name__ == "__main__":
    main()
