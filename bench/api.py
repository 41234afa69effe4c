"""The daemon's API under a crawl at full speed: its latency, and what it costs the crawl.

A testbed web in its own process is crawled with politeness off (no delay, as many
requests per host as fetchers) by a daemon in its own process, its API on loopback.
Each run crawls the web three times, the order rotating from run to run:

    alone      nobody asks the API
    page open  GET /api/v1/status every 2 s, as the web page does
    API loop   GET /api/v1/status and GET /api/v1/search?q=... one after the other,
               without pause, from one client: every answer's time is recorded
    bound      the same loop of GETs, to a server in a process of its own that answers
               a constant JSON body: the latency no server beside this crawl on this
               machine can beat

and reports the crawl's pages a second in each (this crawler's run time, from its
summary), the latency of the API loop's requests (p50, p95, max) and the medians over
the runs. The client runs in this process, the daemon in its own.

    python -m bench api --runs 3 [--pages 4000] [--max-pages 3000] [--out api.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.error import URLError
from urllib.request import Request, urlopen

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from testbed_process import served_testbed_process  # noqa: E402

from bench.harness import rotated  # noqa: E402

TESTBED_PORT = 18_441
TOKEN = "bench-token-0123456789abcdef"
MODES = ("alone", "page open", "API loop", "bound")
PAGE_POLL = 2.0  # seconds between the web page's status requests
QUERY = "solar energy"
STARTUP = 60.0  # seconds the daemon may take to answer


def crawl_in_this_process(seed: str, max_pages: int, port: int, db: str, hosts: list[str]) -> None:
    """The daemon: a politeness-off crawl with its API on `port`; prints its pages and
    run time as one JSON line."""
    from prometheus_client import CollectorRegistry

    from crawler.config import CrawlConfig
    from crawler.service import run_crawl

    config = CrawlConfig(
        seeds=(seed,),
        topic=QUERY,
        db=db,
        max_pages=max_pages,
        concurrency=32,
        per_host_concurrency=32,
        delay=0.0,
        metrics_host="127.0.0.1",
        metrics_port=port,
        api_token=TOKEN,
        allow_private_networks=True,
        allowed_domains=tuple(hosts),
    )
    summary = asyncio.run(run_crawl(config, registry=CollectorRegistry(), handle_signals=False))
    print(json.dumps({"visited": summary.fetched, "seconds": summary.seconds}))


def serve_constant(port: int) -> None:
    """The bound's server: aiohttp answering every GET with a constant status-sized JSON."""
    from aiohttp import web

    body = json.dumps(
        {"state": "running", "pages": 1234, "hosts": 6, "seconds": 12.5}
        | {f"field{i}": i for i in range(10)}
    )

    async def answer(_request: web.Request) -> web.Response:
        return web.Response(text=body, content_type="application/json")

    app = web.Application()
    app.router.add_get("/{tail:.*}", answer)
    web.run_app(app, host="127.0.0.1", port=port, print=None, access_log=None)


def free_port() -> int:
    from testbed.demo import free_port as free

    return free()


def get(url: str) -> float:
    """Seconds to GET `url` and read its answer."""
    started = time.perf_counter()
    with urlopen(Request(url), timeout=10) as response:
        response.read()
    return time.perf_counter() - started


def wait_until_answering(api: str, daemon: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + STARTUP
    while time.monotonic() < deadline:
        if daemon.poll() is not None:
            raise RuntimeError(f"the daemon ended before answering ({daemon.returncode})")
        try:
            get(api + "/healthz")
            return
        except (URLError, OSError):
            time.sleep(0.02)
    raise RuntimeError(f"the daemon did not answer within {STARTUP:.0f} s")


def ask(mode: str, api: str, done: threading.Event, times: dict[str, list[float]]) -> None:
    """The client of `mode`, until `done`; each answer's seconds into `times`."""
    status, search = api + "/api/v1/status", api + f"/api/v1/search?q={QUERY.replace(' ', '+')}"
    while not done.is_set():
        try:
            if mode == "page open":
                times["status"].append(get(status))
                done.wait(PAGE_POLL)
            elif mode in ("API loop", "bound"):
                times["status"].append(get(status))
                times["search"].append(get(search))
            else:
                return
        except (URLError, OSError):
            return  # the daemon has ended


def measure(mode: str, seed: str, max_pages: int, hosts: list[str]) -> dict:
    port = free_port()
    api = f"http://127.0.0.1:{port}"
    constant = None
    if mode == "bound":
        bound_port = free_port()
        constant = subprocess.Popen(
            [sys.executable, "-m", "bench", "api", "--constant", str(bound_port)], cwd=HERE.parent
        )
    times: dict[str, list[float]] = {"status": [], "search": []}
    with tempfile.TemporaryDirectory() as scratch:
        db = f"sqlite+aiosqlite:///{scratch}/bench.db"
        command = [sys.executable, "-m", "bench", "api", "--daemon", seed, str(max_pages)]
        daemon = subprocess.Popen(
            [*command, str(port), db, *hosts],
            cwd=HERE.parent,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        done = threading.Event()
        try:
            wait_until_answering(api, daemon)
            if constant is not None:
                api = f"http://127.0.0.1:{bound_port}"
                wait_until_answering(api, constant)
            client = threading.Thread(target=ask, args=(mode, api, done, times))
            client.start()
            output, _ = daemon.communicate(timeout=1800)
        finally:
            done.set()
            for process in (daemon, constant):
                if process is not None and process.poll() is None:
                    process.kill()
                    process.wait()
        client.join()
    result = json.loads(output.strip().splitlines()[-1])
    result["pages_per_second"] = result["visited"] / result["seconds"]
    every = times["status"] + times["search"]
    result["requests"] = len(every)
    if mode in ("API loop", "bound") and every:
        for name, values in (("all", every), *times.items()):
            result[f"{name}_ms"] = latency(values)
    return {"mode": mode, **result}


def latency(seconds: list[float]) -> dict[str, float]:
    ordered = sorted(seconds)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return {
        "n": len(ordered),
        "p50": 1000 * statistics.median(ordered),
        "p95": 1000 * p95,
        "max": 1000 * ordered[-1],
    }


def report(runs: dict[str, list[dict]]) -> None:
    print(f"\nmedians of {len(runs['alone'])} runs; vs alone: the median of each run's ratio")
    print(f"{'mode':<12}{'pages/s':>10}{'vs alone':>10}{'requests':>10}")
    for mode in MODES:
        rate = statistics.median(r["pages_per_second"] for r in runs[mode])
        ratio = statistics.median(
            r["pages_per_second"] / a["pages_per_second"]
            for r, a in zip(runs[mode], runs["alone"], strict=True)
        )
        requests = statistics.median(r["requests"] for r in runs[mode])
        print(f"{mode:<12}{rate:>10.1f}{(ratio - 1) * 100:>+9.1f}%{requests:>10.0f}")
    print("\nlatency, ms (median over the runs of each run's figure)")
    print(f"{'mode':<10}{'requests':<10}{'n':>8}{'p50':>8}{'p95':>8}{'max':>8}")
    for mode in ("API loop", "bound"):
        for name in ("all", "status", "search"):
            figures = [r[f"{name}_ms"] for r in runs[mode]]
            row = {key: statistics.median(f[key] for f in figures) for key in figures[0]}
            print(
                f"{mode:<10}{name:<10}{row['n']:>8.0f}{row['p50']:>8.1f}{row['p95']:>8.1f}"
                f"{row['max']:>8.1f}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=4_000, help="testbed pages")
    parser.add_argument("--hosts", type=int, default=6)
    parser.add_argument("--max-pages", type=int, default=3_000, help="URLs each crawl visits")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", type=Path, help="write every run here, as JSON")
    args = parser.parse_args()
    runs: dict[str, list[dict]] = {mode: [] for mode in MODES}
    with served_testbed_process(port=TESTBED_PORT, pages=args.pages, hosts=args.hosts) as (
        seed,
        hosts,
        _server,
    ):
        for run in range(args.runs):
            for mode in rotated(MODES, run):
                result = measure(mode, seed, args.max_pages, hosts)
                runs[mode].append(result)
                print(json.dumps(result), file=sys.stderr, flush=True)
    report(runs)
    if args.out:
        settings = vars(args) | {"out": str(args.out)}
        args.out.write_text(json.dumps({"settings": settings, "runs": runs}))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--constant":
        serve_constant(int(sys.argv[2]))
    elif len(sys.argv) > 1 and sys.argv[1] == "--daemon":
        seed_, max_pages_, port_, db_, *hosts_ = sys.argv[2:]
        os.environ.pop("CRAWLER_API_TOKEN", None)
        crawl_in_this_process(seed_, int(max_pages_), int(port_), db_, hosts_)
    else:
        main()
