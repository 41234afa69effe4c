"""Daemons sharing one crawl through PostgreSQL: how the crawl scales with them on this
machine, and where the host leases' design stops scaling.

    python bench/cluster.py [--daemons 1 2 4] [--modes polite fast] [--runs 3]
        [--duration 60] [--json bench/results/cluster.json]

One PostgreSQL server (Debian's binaries, started as the tests start theirs:
tests/postgres.py) serves the whole benchmark. Two parts:

The crawl. For each mode and number of daemons N, N daemon processes (`python -m
crawler run --db postgresql+asyncpg://... --daemon-id bench-I`) crawl the real web of
`bench/realweb/` (nginx on 127.0.0.11-18:8800, its seeds, the topic "sparse matrix")
into a fresh database, started at once, each stopping at `--duration` (a per-daemon
limit). polite: the crawler's politeness (`--delay`, default 1 s, one request at a time
a host); fast: politeness off as bench/throughput.py has it (`--delay 0`, 32 requests
at once, all to one host if need be). Runs interleave (the order rotates); medians;
ratios against N = 1 of the same mode, in the same benchmark. Measured per run:

- pages: distinct HTML pages stored with status 200 (a redirect counts as the page it
  leads to), read from the database; pages/s over the crawl's fetching window (first to
  last page fetched), and over its second half (after the start's hand-overs);
- requests a page: the lines nginx's access log gained during the run (the log is read
  from the byte it had reached when the run started), robots.txt included, over the
  pages; beside it the daemons' own count (`crawler_requests_total`), and lines logged
  while no daemon ran (other users of the same nginx; 0 when the log is the run's
  alone); requests for a URL asked already in the run ("repeated"), and for robots.txt;
- hand-overs: hosts claimed (`crawler_host_leases_claimed_total`, scraped from every
  daemon's metrics port each second) beyond the first claim of each host (the rows of
  `host_leases`); the seconds each daemon waited for its first host; the busiest
  daemon's share of the pages;
- CPU seconds a page of the daemons (their rusage), of PostgreSQL (the postmaster's
  process tree, the backends it reaped included) and of nginx (its master and worker),
  and the machine's busy cores over the run (/proc/stat): the rest is other work.

The leases' limit. On a table of `--hosts` (100,000) host leases, held by
`--model-daemons` (100) daemons but for 1% that are free, each host with queued URLs:

- pgbench runs the project's own claim of a free lease (storage/leases.py's `UPDATE ...
  WHERE host IN (SELECT ... FOR UPDATE SKIP LOCKED)`, compiled from its SQLAlchemy
  statement) with 1 to 32 clients: claims and rows claimed a second; and its renewal
  (`UPDATE host_leases ... WHERE owner = ...`, a daemon's share of rows);
- the real lease tick (crawler/engine/leases.py's `HostLeases.tick`: renew, heartbeat,
  rebalance, claim, count) of simulated daemons, back to back for `--tick-seconds`, at
  two frontier sizes (`--queued-per-host`), each reusing the census of the hosts with
  queued URLs that one of them took before; with EXPLAIN ANALYZE of each statement, and
  of the census's (the registration of hosts found since the last, and the count);
- a model: a daemon ticks every lease_seconds / 4, so N daemons need N * 4 / lease_seconds
  ticks a second, each costing the database the CPU measured, and the census is taken
  once in that interval, whatever the number of daemons (each a straight line in the
  frontier's size, fitted on the two sizes); the daemons one core of PostgreSQL serves,
  and what 100 daemons need.

Every table is printed with the command that reproduces it; --json keeps every run.
Needs nginx serving the real web (`python bench/realweb/realweb.py start`) and Debian's
postgresql package.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import re
import resource
import shlex
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from bench.harness import rotated  # noqa: E402
from crawler.engine.leases import TICKS_PER_LEASE  # noqa: E402

TOPIC = "sparse matrix"  # a topic of the real web's ground truth
REALWEB = Path("/tmp/realweb")  # bench/realweb/realweb.py's default state directory
MODES = ("polite", "fast")
FAST_FLAGS = ("--delay", "0", "--concurrency", "32", "--per-host-concurrency", "32")
CLK_TCK = os.sysconf("SC_CLK_TCK")
GRACE = 60.0  # seconds a daemon may run past its --duration before it is stopped
SCRAPE_EVERY = 1.0
IDLE_GAP = 1.0  # seconds before each run in which no daemon runs: the log's other users
# sentinels in the compiled statements, replaced by pgbench variables
OWNER, NOW, UNTIL = "sentinel-owner", 1111111111.5, 2222222222.5


# ---------------------------------------------------------------- pure computations


LOG_LINE = re.compile(r'^\S+ \[[^\]]*\] (\S+) "(\S+) (\S+)[^"]*" (\d{3}) ')


@dataclass(frozen=True)
class LogCounts:
    """What nginx logged: requests, by status; robots.txt requests; requests for a URL
    (host and path) asked before in the same lines, robots.txt aside."""

    requests: int
    statuses: dict[str, int]
    robots: int
    repeated: int


def count_log(lines: Iterable[str]) -> LogCounts:
    requests = robots = repeated = 0
    statuses: Counter[str] = Counter()
    seen: set[tuple[str, str]] = set()
    for line in lines:
        match = LOG_LINE.match(line)
        if match is None:
            continue
        host, _method, path, status = match.groups()
        requests += 1
        statuses[status] += 1
        if path == "/robots.txt":
            robots += 1
        elif (host, path) in seen:
            repeated += 1
        else:
            seen.add((host, path))
    return LogCounts(requests, dict(sorted(statuses.items())), robots, repeated)


def handovers(claimed: Sequence[int], hosts_leased: int) -> int:
    """Claims beyond the first of each host: the daemons' claim counts summed, less the
    hosts ever leased (a lease row is kept once made)."""
    return max(sum(claimed) - hosts_leased, 0)


def top_share(pages_by_daemon: Sequence[int]) -> float | None:
    """The busiest daemon's share of the pages the daemons visited."""
    total = sum(pages_by_daemon)
    return max(pages_by_daemon) / total if total else None


def median(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def ratio(value: float | None, base: float | None) -> float | None:
    if value is None or not base:
        return None
    return value / base


SUMMARY_FIELDS = (
    "pages",
    "pages_per_second",
    "late_pages_per_second",
    "requests_per_page",
    "own_requests_per_page",
    "foreign_requests",
    "repeated_requests",
    "robots_requests",
    "handovers",
    "top_share",
    "first_claim_max_s",
    "idle_daemons",
    "daemon_cpu_ms_per_page",
    "postgres_cpu_ms_per_page",
    "nginx_cpu_ms_per_page",
    "daemon_cores",
    "postgres_cores",
    "nginx_cores",
    "busy_cores",
)


def summarize(runs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Medians of each figure over the runs."""
    summary: dict[str, Any] = {"runs": len(runs)}
    for name in SUMMARY_FIELDS:
        summary[name] = median(run.get(name) for run in runs)
    return summary


def with_ratios(by_daemons: dict[int, dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """Each summary with pages/s and CPU a page as ratios to the fewest daemons'."""
    base = by_daemons[min(by_daemons)]
    out = {}
    for n, row in sorted(by_daemons.items()):
        out[n] = row | {
            "speedup": ratio(row["pages_per_second"], base["pages_per_second"]),
            "late_speedup": ratio(row["late_pages_per_second"], base["late_pages_per_second"]),
            "cpu_ratio": ratio(cpu_per_page(row), cpu_per_page(base)),
        }
    return out


def cpu_per_page(row: dict[str, Any]) -> float | None:
    parts = [row.get(k) for k in ("daemon_cpu_ms_per_page", "postgres_cpu_ms_per_page")]
    return None if None in parts else sum(p for p in parts if p is not None)


def ticks_needed(daemons: int, lease_seconds: float) -> float:
    """Lease ticks a second N daemons ask of the database: each ticks every
    lease_seconds / TICKS_PER_LEASE (renew, count, rebalance, claim: one transaction)."""
    return daemons * TICKS_PER_LEASE / lease_seconds


def fit_line(points: Sequence[tuple[float, float]]) -> tuple[float, float]:
    """Least squares y = a + b x: (a, b). One point: a line through the origin."""
    if len(points) == 1:
        x, y = points[0]
        return 0.0, y / x
    mean_x = statistics.fmean(x for x, _ in points)
    mean_y = statistics.fmean(y for _, y in points)
    spread = sum((x - mean_x) ** 2 for x, _ in points)
    slope = sum((x - mean_x) * (y - mean_y) for x, y in points) / spread
    return mean_y - slope * mean_x, slope


@dataclass(frozen=True)
class ModelRow:
    queued_urls: int
    tick_cpu_s: float  # database CPU seconds a tick
    census_cpu_s: float  # database CPU seconds a census, once a tick interval
    ticks_per_second: float  # what the daemons ask
    cores_needed: float  # database cores that takes
    daemons_per_core: float  # daemons one database core keeps ticking


def lease_model(
    line: tuple[float, float],
    queued: Iterable[int],
    *,
    daemons: int,
    lease_seconds: float,
    census: tuple[float, float] = (0.0, 0.0),
) -> list[ModelRow]:
    """From a tick's database CPU and a census's, each a line in the queued URLs: for
    each frontier size, the database cores `daemons` daemons need, and the daemons a
    core can serve. The daemons take one census a tick interval between them."""
    intercept, slope = line
    rows = []
    for size in queued:
        cost = max(intercept + slope * size, 1e-9)
        census_cost = max(census[0] + census[1] * size, 0.0)
        census_cores = census_cost * ticks_needed(1, lease_seconds)
        needed = ticks_needed(daemons, lease_seconds)
        rows.append(
            ModelRow(
                queued_urls=size,
                tick_cpu_s=cost,
                census_cpu_s=census_cost,
                ticks_per_second=needed,
                cores_needed=needed * cost + census_cores,
                daemons_per_core=max(1.0 - census_cores, 0.0)
                / (ticks_needed(1, lease_seconds) * cost),
            )
        )
    return rows


# ---------------------------------------------------------------- processes and CPU


def _stat_fields(pid: int) -> list[str]:
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().rsplit(")", 1)[1].split()


def tree_cpu(pid: int, depth: int = 4) -> float:
    """CPU seconds of a process, the children it reaped, and its live descendants."""
    try:
        fields = _stat_fields(pid)
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return 0.0
    own = sum(int(value) for value in fields[11:15]) / CLK_TCK  # utime stime cutime cstime
    if depth == 0:
        return own
    return own + sum(tree_cpu(int(child), depth - 1) for child in children)


def busy_cores_seconds() -> tuple[float, float]:
    """The machine's (busy, total) CPU seconds since boot, all cores."""
    with open("/proc/stat") as stat:
        values = [int(v) for v in stat.readline().split()[1:]]
    idle = values[3] + values[4]  # idle, iowait
    return (sum(values[:8]) - idle) / CLK_TCK, sum(values[:8]) / CLK_TCK


def nginx_pid(directory: Path) -> int | None:
    with contextlib.suppress(OSError, ValueError):
        pid = int((directory / "nginx.pid").read_text())
        os.kill(pid, 0)
        return pid
    return None


def free_ports(count: int) -> list[int]:
    sockets = [socket.socket() for _ in range(count)]
    try:
        for probe in sockets:
            probe.bind(("127.0.0.1", 0))
        return [int(probe.getsockname()[1]) for probe in sockets]
    finally:
        for probe in sockets:
            probe.close()


METRIC = re.compile(r"^(crawler_\w+) (\S+)$", re.M)  # the metrics without labels


def scrape(port: int) -> dict[str, float] | None:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=1) as answer:
            text = answer.read().decode()
    except OSError:
        return None
    return {name: float(value) for name, value in METRIC.findall(text)}


# ---------------------------------------------------------------- the server


def server_unavailable(reason: str) -> NoReturn:
    raise SystemExit(f"cannot start PostgreSQL: {reason}")


@contextlib.contextmanager
def postgres() -> Iterator[Any]:
    from tests.postgres import running_server

    with running_server(unavailable=server_unavailable) as server:
        yield server


def database_name(url: str) -> str:
    return url.split("@/", 1)[1].split("?", 1)[0]


def postmaster_pid(server: Any) -> int:
    lock = Path(server.socket_dir) / f".s.PGSQL.{server.port}.lock"
    return int(lock.read_text().split()[0])


async def _create_schema(url: str) -> None:
    import storage

    engine = storage.open_engine(url)
    try:
        await storage.create_schema(engine)
    finally:
        await engine.dispose()


# ---------------------------------------------------------------- part 1: the crawl


@dataclass
class Daemon:
    name: str
    port: int
    process: subprocess.Popen[bytes]
    out: Path
    cpu: float = 0.0
    exit_code: int | None = None
    claimed: int = 0
    requests: int = 0
    first_claim: float | None = None


def daemon_command(args: argparse.Namespace, db: str, name: str, port: int, mode: str) -> list[str]:
    politeness = FAST_FLAGS if mode == "fast" else ("--delay", str(args.polite_delay))
    return [
        sys.executable,
        "-m",
        "crawler",
        "run",
        "--db",
        db,
        "--seeds-file",
        str(args.realweb / "seeds.txt"),
        "--topic",
        TOPIC,
        "--allow-private-networks",
        "--daemon-id",
        name,
        "--duration",
        str(args.duration),
        "--lease-seconds",
        str(args.lease_seconds),
        "--metrics-port",
        str(port),
        *politeness,
    ]


def reap(daemon: Daemon, block: bool) -> bool:
    """Whether the daemon has exited (its exit code and CPU recorded)."""
    if daemon.exit_code is not None:
        return True
    pid, status, usage = os.wait4(daemon.process.pid, 0 if block else os.WNOHANG)
    if pid == 0:
        return False
    daemon.exit_code = os.waitstatus_to_exitcode(status)
    daemon.process.returncode = daemon.exit_code
    daemon.cpu = usage.ru_utime + usage.ru_stime
    return True


@dataclass(frozen=True)
class CpuSnapshot:
    """CPU seconds so far: PostgreSQL's, nginx's, this process's, the machine's."""

    at: float
    postgres: float
    nginx: float
    own: float
    busy: float

    @classmethod
    def take(cls, postgres_pid: int, nginx_pid: int) -> CpuSnapshot:
        busy, _total = busy_cores_seconds()
        return cls(
            time.monotonic(), tree_cpu(postgres_pid), tree_cpu(nginx_pid), time.process_time(), busy
        )


def launch(args: argparse.Namespace, db: str, mode: str, n: int, scratch: Path) -> list[Daemon]:
    env = os.environ | {
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    }
    daemons = []
    for i, port in enumerate(free_ports(n)):
        name = f"bench-{i}"
        out = scratch / f"{name}.log"
        with out.open("wb") as sink:
            process = subprocess.Popen(
                daemon_command(args, db, name, port, mode),
                cwd=ROOT,
                env=env,
                stdout=sink,
                stderr=subprocess.STDOUT,
            )
        daemons.append(Daemon(name, port, process, out))
    return daemons


def watch(daemons: list[Daemon], launched: float, deadline: float) -> None:
    """Scrape every daemon's metrics each second until all have exited; past the
    deadline, SIGINT, and 15 s later SIGKILL."""
    stopping = False
    while not all(reap(d, block=False) for d in daemons):
        for d in daemons:
            metrics = scrape(d.port) if d.exit_code is None else None
            if metrics:
                d.claimed = int(metrics.get("crawler_host_leases_claimed_total", 0))
                d.requests = int(metrics.get("crawler_requests_total", 0))
                if d.claimed and d.first_claim is None:
                    d.first_claim = time.monotonic() - launched
        if time.monotonic() > deadline and not stopping:
            stopping = True  # past its duration: the run's record says so (its stop line)
            for d in daemons:
                if d.exit_code is None:
                    d.process.send_signal(signal.SIGINT)
            deadline += 15
        elif time.monotonic() > deadline:
            for d in daemons:
                if d.exit_code is None:
                    d.process.kill()
            for d in daemons:
                reap(d, block=True)
        time.sleep(SCRAPE_EVERY)


CPU_PARTS = ("daemon", "postgres", "nginx")
HTML_200 = "status = 200 AND error IS NULL AND content_type LIKE '%html%'"


def read_crawl(server: Any, db: str) -> dict[str, Any]:
    """What the crawl stored: distinct HTML pages answered 200, its fetching window and
    the pages of its second half, fetches, hosts ever leased, each daemon's pages."""
    row = server.psql(
        f"SELECT (SELECT count(DISTINCT coalesce(final_url, url)) FROM urls WHERE {HTML_200}),"
        " (SELECT extract(epoch FROM min(fetched_at)) FROM urls),"
        " (SELECT extract(epoch FROM max(fetched_at)) FROM urls),"
        " (SELECT coalesce(sum(fetch_count), 0) FROM urls),"
        " (SELECT count(*) FROM urls WHERE fetch_count > 1),"
        " (SELECT count(*) FROM host_leases)",
        db,
    ).split("|")
    first, last = float(row[1] or 0), float(row[2] or 0)
    late = server.psql(
        f"SELECT count(DISTINCT coalesce(final_url, url)) FROM urls WHERE {HTML_200}"
        f" AND fetched_at >= to_timestamp({(first + last) / 2})",
        db,
    )
    by_daemon = server.psql("SELECT id, pages FROM daemons", db).split()
    return {
        "pages": int(row[0]),
        "fetch_seconds": max(last - first, 1e-9),
        "late_pages": int(late),
        "fetch_count": int(row[3]),
        "rows_fetched_twice": int(row[4]),
        "hosts_leased": int(row[5]),
        "by_daemon": {name: int(pages) for name, pages in (r.split("|") for r in by_daemon)},
    }


def log_lines(log: Path, start: int, end: int) -> list[str]:
    with log.open("rb") as lines:
        lines.seek(start)
        return lines.read(end - start).decode(errors="replace").splitlines()


def crawl_once(server: Any, args: argparse.Namespace, mode: str, n: int) -> dict[str, Any]:
    """N daemons crawl the real web into a fresh database; what it cost."""
    began = time.monotonic()
    url = server.new_database()
    db = database_name(url)
    log = args.realweb / "logs" / "access.log"
    pg, web = postmaster_pid(server), nginx_pid(args.realweb)
    if web is None:
        raise SystemExit("nginx is not running: python bench/realweb/realweb.py start")
    gap_start = log.stat().st_size
    time.sleep(IDLE_GAP)  # the log's lines meanwhile are others'
    start = log.stat().st_size
    before = CpuSnapshot.take(pg, web)
    scratch = Path(tempfile.mkdtemp(prefix="cluster-bench-"))
    daemons = launch(args, url, mode, n, scratch)
    watch(daemons, before.at, before.at + args.duration + GRACE)
    wall = time.monotonic() - before.at
    time.sleep(1.5)  # nginx flushes its log each second; the postmaster reaps its backends
    after = CpuSnapshot.take(pg, web)
    span = after.at - before.at
    foreign = count_log(log_lines(log, gap_start, start))
    counts = count_log(log_lines(log, start, log.stat().st_size))
    crawl = read_crawl(server, db)
    server.psql(f"DROP DATABASE {db}")
    pages = max(crawl["pages"], 1)
    cpu = {
        "daemon": sum(d.cpu for d in daemons),
        "postgres": after.postgres - before.postgres,
        "nginx": after.nginx - before.nginx,
        "benchmark": after.own - before.own,
        "busy": after.busy - before.busy,
    }
    outputs = {d.name: d.out.read_text(errors="replace").splitlines() for d in daemons}
    for d in daemons:
        d.out.unlink()
    scratch.rmdir()
    stops = [next((s for s in outputs[d.name] if s.startswith("stopped:")), None) for d in daemons]
    result = {
        "mode": mode,
        "daemons": n,
        "wall_seconds": wall,
        "fetch_seconds": crawl["fetch_seconds"],
        "pages": crawl["pages"],
        "pages_per_second": crawl["pages"] / crawl["fetch_seconds"],
        "late_pages_per_second": crawl["late_pages"] / (crawl["fetch_seconds"] / 2),
        "requests": counts.requests,
        "requests_per_page": counts.requests / pages,
        "own_requests_per_page": sum(d.requests for d in daemons) / pages,
        "statuses": counts.statuses,
        "robots_requests": counts.robots,
        "repeated_requests": counts.repeated,
        "foreign_requests": foreign.requests,
        "fetch_count": crawl["fetch_count"],
        "rows_fetched_twice": crawl["rows_fetched_twice"],
        "hosts_leased": crawl["hosts_leased"],
        "claims": [d.claimed for d in daemons],
        "handovers": handovers([d.claimed for d in daemons], crawl["hosts_leased"]),
        "first_claim_s": [d.first_claim for d in daemons],
        "first_claim_max_s": max((d.first_claim or wall) for d in daemons),
        "daemon_pages": [crawl["by_daemon"].get(d.name, 0) for d in daemons],
        "idle_daemons": sum(1 for d in daemons if not crawl["by_daemon"].get(d.name)),
        "top_share": top_share([crawl["by_daemon"].get(d.name, 0) for d in daemons]),
        "exit_codes": [d.exit_code for d in daemons],
        "stops": stops,
        "log_problems": [
            sum(1 for line in outputs[d.name] if " ERROR " in line or " WARNING " in line)
            for d in daemons
        ],
        "cpu_seconds": cpu,
        "daemon_cpu_s": [d.cpu for d in daemons],
        **{f"{part}_cpu_ms_per_page": 1000 * cpu[part] / pages for part in CPU_PARTS},
        **{f"{part}_cores": cpu[part] / span for part in (*CPU_PARTS, "busy")},
    }
    result["run_seconds"] = time.monotonic() - began  # the run's database and pauses too
    if any(code != 0 for code in result["exit_codes"]) or any(
        stop != "stopped: duration" for stop in stops
    ):
        result["tails"] = {name: lines[-8:] for name, lines in outputs.items()}
    return result


def run_crawls(
    server: Any, args: argparse.Namespace, results: dict[str, Any]
) -> dict[str, dict[int, list[dict[str, Any]]]]:
    runs: dict[str, dict[int, list[dict[str, Any]]]] = {
        m: {n: [] for n in args.daemons} for m in args.modes
    }
    configs = [(mode, n) for mode in args.modes for n in args.daemons]
    for index in range(args.runs):
        for mode, n in rotated(configs, index):
            result = crawl_once(server, args, mode, n)
            runs[mode][n].append(result)
            brief = {k: v for k, v in result.items() if k != "tails"}
            print(json.dumps({"run": index, **brief}), file=sys.stderr, flush=True)
            if "tails" in result:
                # an exit code, or a stop before --duration (the web crawled to its end)
                ended = json.dumps(result["tails"])
                print(f"not stopped by --duration: {ended}", file=sys.stderr, flush=True)
            results["crawl"] = runs
            write_json(args, results)
    return runs


def print_crawl(args: argparse.Namespace, runs: dict[str, dict[int, list[dict[str, Any]]]]) -> dict:
    summaries: dict[str, Any] = {}
    print(f"\nThe crawl: N daemons on one PostgreSQL, the real web; medians of {args.runs} runs")
    print(f"    {command(args, parts=['crawl'])}")
    print(
        f"({os.cpu_count()} cores; each daemon stops at --duration {args.duration:g} s; "
        f"lease_seconds {args.lease_seconds:g})"
    )
    rows = []
    for mode in args.modes:
        summaries[mode] = with_ratios({n: summarize(r) for n, r in runs[mode].items() if r})
        for n, row in summaries[mode].items():
            rows.append(
                [
                    mode,
                    str(n),
                    fmt(row["pages"], 0),
                    fmt(row["pages_per_second"], 1),
                    fmt(row["speedup"], 2),
                    fmt(row["late_pages_per_second"], 1),
                    fmt(row["late_speedup"], 2),
                    fmt(row["requests_per_page"], 3),
                    fmt(row["repeated_requests"], 0),
                    fmt(row["robots_requests"], 0),
                    fmt(row["handovers"], 0),
                    fmt(row["top_share"], 2),
                    fmt(row["first_claim_max_s"], 0),
                    fmt(row["idle_daemons"], 0),
                    "+".join(fmt(row[f"{part}_cpu_ms_per_page"], 2) for part in CPU_PARTS),
                    "/".join(fmt(row[f"{part}_cores"], 2) for part in (*CPU_PARTS, "busy")),
                ]
            )
    header = "mode N pages pages/s x1 late/s x1 req/page repeated robots hand-overs top-share"
    header += " first-host-s idle CPU-ms/page:d+pg+nginx cores:d/pg/nginx/busy"
    print_table(header.split(), rows)
    print(
        "pages: distinct HTML pages stored with 200; pages/s over the fetching window, late/s "
        "over its second half; x1: against N = 1; req/page: nginx's log lines (robots.txt "
        "included) a page; repeated: requests for a URL asked before in the run (robots.txt "
        "aside; robots: its requests); top-share: the busiest daemon's share of the pages; "
        "first-host-s: "
        "the longest a daemon waited for its first host (the run's length if it got none); "
        "idle: daemons that stored no page; cores: CPU seconds a second of the run"
    )
    foreign = sum(
        r["foreign_requests"] for by_n in runs.values() for rs in by_n.values() for r in rs
    )
    print(f"{foreign} requests logged in the {IDLE_GAP:g} s before each run, while no daemon ran")
    return summaries


def print_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows, strict=True)]
    for line in (header, *rows):
        print(" ".join(str(cell).rjust(width) for cell, width in zip(line, widths, strict=True)))


def fmt(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


# ---------------------------------------------------------------- part 2: the leases' limit


class _Result:
    def scalars(self) -> Iterator[Any]:
        return iter(())

    def all(self) -> list[Any]:
        return []


class _Recorder:
    """Stands for a connection: keeps the statements the storage functions execute."""

    def __init__(self) -> None:
        from sqlalchemy.dialects import postgresql

        self.dialect = postgresql.asyncpg.dialect()  # type: ignore[attr-defined]
        self.statements: list[Any] = []

    async def execute(self, statement: Any, *_: Any) -> _Result:
        self.statements.append(statement)
        return _Result()

    async def scalar(self, statement: Any, *_: Any) -> int:
        self.statements.append(statement)
        return 0


def compiled(record: Any) -> list[str]:
    """The SQL of the statements `record(connection)` executes, with its values."""
    from sqlalchemy.dialects import postgresql

    recorder = _Recorder()
    asyncio.run(record(recorder))
    dialect = postgresql.dialect()  # type: ignore[no-untyped-call]
    return [
        str(s.compile(dialect=dialect, compile_kwargs={"literal_binds": True}))
        for s in recorder.statements
    ]


def claim_script(limit: int) -> str:
    """pgbench: the project's claim of free leases (the SKIP LOCKED statement), at the
    time of each transaction; the claimed lease ends at once (a claim and a release in
    one), so the free leases stay as many and the claimed go to the back of the order."""
    import storage

    async def record(connection: Any) -> None:
        await storage.claim_hosts(connection, OWNER, now=NOW, until=UNTIL, limit=limit)

    statement = compiled(record)[-1]
    for sentinel in (f"'{OWNER}'", repr(NOW), repr(UNTIL), "SKIP LOCKED"):
        if sentinel not in statement:
            raise SystemExit(f"the claim statement changed: no {sentinel} in {statement}")
    statement = statement.replace(f"'{OWNER}'", "'claimer-' || :client_id")
    statement = statement.replace(repr(NOW), ":now").replace(repr(UNTIL), ":now")
    clock = "SELECT extract(epoch FROM clock_timestamp()) AS now \\gset"
    return f"{clock}\n{' '.join(statement.split())};\n"


def renew_script(daemons: int) -> str:
    """pgbench: the project's renewal of one daemon's leases (all the rows it holds)."""
    import storage

    async def record(connection: Any) -> None:
        await storage.renew_leases(connection, OWNER, until=UNTIL)

    statement = " ".join(compiled(record)[0].split())
    statement = statement.replace(f"'{OWNER}'", "'holder-' || :d").replace(repr(UNTIL), "4e9")
    return f"\\set d random(0, {daemons - 1})\n{statement};\n"


def tick_statements(owner: str) -> list[str]:
    """A tick's statements as `HostLeases.tick` runs them when another daemon's census
    is recent (the heartbeat aside)."""
    import storage

    async def record(connection: Any) -> None:
        await storage.renew_leases(connection, owner, until=UNTIL)
        await storage.latest_census(connection, since=NOW)
        await storage.count_queued_by_host(connection, owner)
        await storage.live_daemons(connection, since=NOW)
        await storage.claim_hosts(connection, owner, now=NOW, until=UNTIL, limit=10)
        await storage.any_queued(connection)

    return [" ".join(s.split()) for s in compiled(record)]


def census_statements() -> list[str]:
    """A census's statements, as the tick that takes it runs them."""
    import storage

    async def record(connection: Any) -> None:
        await storage.register_hosts(connection)
        await storage.count_queued_hosts(connection)

    return [" ".join(s.split()) for s in compiled(record)]


def fill(server: Any, db: str, hosts: int, per_host: int, daemons: int, free: float) -> None:
    """The crawl's tables with `hosts` hosts, `per_host` queued URLs each; the leases
    held by `daemons` daemons (holder-I) but a fraction `free`, long expired."""
    asyncio.run(_create_schema(server.url(db)))
    free_hosts = int(hosts * free)
    server.psql(
        "INSERT INTO urls (id, url, host, depth, score, state, fetch_count)"
        f" SELECT i, 'http://host-' || (i % {hosts}) || '.example/' || i,"
        f" 'host-' || (i % {hosts}) || '.example:80', 1, 0.5, 0, 0"
        f" FROM generate_series(1, {hosts * per_host}) i;"
        " INSERT INTO host_leases (host, owner, expires_at)"
        " SELECT 'host-' || i || '.example:80',"
        f" CASE WHEN i < {free_hosts} THEN NULL ELSE 'holder-' || (i % {daemons}) END,"
        f" CASE WHEN i < {free_hosts} THEN i ELSE 4e9 END FROM generate_series(0, {hosts - 1}) i",
        db,
    )
    server.psql("VACUUM ANALYZE", db)


def pgbench(server: Any, db: str, script: Path, clients: int, seconds: float) -> dict[str, Any]:
    updated = "SELECT n_tup_upd FROM pg_stat_user_tables WHERE relname = 'host_leases'"
    rows_before = int(server.psql(updated, db))
    pg = postmaster_pid(server)
    cpu = tree_cpu(pg)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    argv = server.client(
        "pgbench",
        "-n",
        "-M",
        "prepared",
        "-c",
        str(clients),
        "-j",
        str(min(clients, os.cpu_count() or 1)),
        "-T",
        str(int(seconds)),
        "-f",
        str(script),
        db,
    )
    output = subprocess.run(
        argv, capture_output=True, text=True, timeout=seconds + 60, check=True
    ).stdout
    time.sleep(0.7)  # the backends exit and the postmaster reaps them; the statistics land
    cpu = tree_cpu(pg) - cpu
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    client_cpu = (after.ru_utime + after.ru_stime) - (children.ru_utime + children.ru_stime)
    rows = int(server.psql(updated, db)) - rows_before
    processed = int(re.search(r"number of transactions actually processed: (\d+)", output).group(1))  # type: ignore[union-attr]
    failed = re.search(r"number of failed transactions: (\d+)", output)
    latency = re.search(r"latency average = ([\d.]+) ms", output)
    return {
        "clients": clients,
        "statements": processed,
        "per_second": processed / seconds,
        "rows_per_second": rows / seconds,
        "rows_per_statement": rows / max(processed, 1),
        "failed": int(failed.group(1)) if failed else 0,
        "latency_ms": float(latency.group(1)) if latency else None,
        "postgres_cpu_ms": 1000 * cpu / max(processed, 1),
        "pgbench_cpu_ms": 1000 * client_cpu / max(processed, 1),
    }


async def simulate_ticks(
    url: str, daemons: int, concurrent: int, seconds: float, postgres_cpu: Callable[[], float]
) -> dict[str, Any]:
    """`daemons` lease keepers (the real HostLeases, holder-I), `concurrent` of them
    ticking at once, back to back, for `seconds`, after one of them took the census
    (which the others reuse for a tick interval: `seconds` must be shorter). The CPU
    seconds of PostgreSQL (`postgres_cpu`, its whole process tree) and of this process
    are those of the ticks alone: the joins and the census come before."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.ext.asyncio import create_async_engine

    from crawler.engine.leases import HostLeases

    engine = create_async_engine(make_url(url), pool_size=concurrent, max_overflow=0)
    keepers = [
        HostLeases(db=engine, daemon_id=f"holder-{i}", lease_seconds=60.0, cooldown=lambda _: 1.0)
        for i in range(daemons)
    ]
    for keeper in keepers:
        await keeper.join()
    if seconds >= keepers[0].interval:
        raise SystemExit(f"--tick-seconds must be under a tick interval, {keepers[0].interval} s")
    await keepers[-1].tick(busy=(), pages=0, rate=0.0)  # the census, before the clock starts
    cpu, client = postgres_cpu(), time.process_time()
    latencies: list[float] = []
    claimed = 0

    async def ticker(first: int, until: float) -> None:
        nonlocal claimed
        index = first
        while time.monotonic() < until:
            keeper = keepers[index % daemons]
            index += concurrent
            started = time.perf_counter()
            change = await keeper.tick(busy=(), pages=0, rate=0.0)
            latencies.append(time.perf_counter() - started)
            claimed += len(change.claimed)

    try:
        started = time.monotonic()
        await asyncio.gather(*(ticker(k, started + seconds) for k in range(concurrent)))
        elapsed = time.monotonic() - started
    finally:
        client = time.process_time() - client
        await engine.dispose()
    await asyncio.sleep(0.7)  # the backends exit and the postmaster reaps them
    return {
        "postgres_cpu_s": postgres_cpu() - cpu,
        "client_cpu_s": client,
        "ticks": len(latencies),
        "ticks_per_second": len(latencies) / elapsed,
        "latency_ms": 1000 * statistics.median(latencies) if latencies else None,
        "claimed": claimed,
        "held": sum(len(k) for k in keepers),
        "seconds": elapsed,
    }


def explain(server: Any, db: str, sql: str, times: int = 3) -> float:
    """Milliseconds a statement takes (EXPLAIN ANALYZE, rolled back): the median of
    `times`, the first warming the cache."""
    taken = []
    for _ in range(times):
        output = server.psql(f"BEGIN; EXPLAIN (ANALYZE, COSTS OFF) {sql}; ROLLBACK;", db)
        found = re.search(r"Execution Time: ([\d.]+) ms", output)
        taken.append(float(found.group(1)) if found else math.nan)
    return statistics.median(taken)


def run_model(server: Any, args: argparse.Namespace, results: dict[str, Any]) -> dict[str, Any]:
    model: dict[str, Any] = {"claims": [], "renewals": [], "ticks": []}
    results["model"] = model
    scratch = Path(tempfile.mkdtemp(prefix="cluster-bench-"))
    claim = scratch / "claim.sql"
    renew = scratch / "renew.sql"
    claim.write_text(claim_script(args.claim_limit))
    renew.write_text(renew_script(args.model_daemons))
    model["claim_sql"], model["renew_sql"] = claim.read_text(), renew.read_text()
    url = server.new_database()
    db = database_name(url)
    fill(server, db, args.hosts, 1, args.model_daemons, args.free_fraction)
    for clients in args.clients:
        model["claims"].append(pgbench(server, db, claim, clients, args.pgbench_seconds))
        print(json.dumps({"claim": model["claims"][-1]}), file=sys.stderr, flush=True)
    for clients in args.renew_clients:
        model["renewals"].append(pgbench(server, db, renew, clients, args.pgbench_seconds))
        print(json.dumps({"renew": model["renewals"][-1]}), file=sys.stderr, flush=True)
    server.psql(f"DROP DATABASE {db}")
    for per_host in args.queued_per_host:
        url = server.new_database()
        db = database_name(url)
        fill(server, db, args.hosts, per_host, args.model_daemons, args.free_fraction)
        statements = {sql: explain(server, db, sql) for sql in tick_statements("holder-5")}
        census = {sql: explain(server, db, sql) for sql in census_statements()}
        pg = postmaster_pid(server)
        ticks = asyncio.run(
            simulate_ticks(
                url,
                args.model_daemons,
                args.tick_clients,
                args.tick_seconds,
                postgres_cpu=lambda pg=pg: tree_cpu(pg),
            )
        )
        ticks |= {
            "queued_per_host": per_host,
            "queued_urls": args.hosts * per_host,
            "postgres_cpu_ms": 1000 * ticks["postgres_cpu_s"] / max(ticks["ticks"], 1),
            "client_cpu_ms": 1000 * ticks["client_cpu_s"] / max(ticks["ticks"], 1),
            "statements_ms": statements,
            "census_statements_ms": census,
            "census_ms": sum(census.values()),
        }
        model["ticks"].append(ticks)
        print(json.dumps({"tick": ticks}), file=sys.stderr, flush=True)
        server.psql(f"DROP DATABASE {db}")
        write_json(args, results)
    for path in (claim, renew):
        path.unlink()
    scratch.rmdir()
    return model


def print_model(args: argparse.Namespace, model: dict[str, Any]) -> list[ModelRow]:
    print(
        f"\nThe leases' limit: {args.hosts:,} host leases held by {args.model_daemons} daemons, "
        f"{args.free_fraction:.0%} of them free"
    )
    print(f"    {command(args, parts=['model'])}")
    print(
        "claims of free leases (storage/leases.py's update ... FOR UPDATE SKIP LOCKED, "
        f"limit {args.claim_limit}), pgbench -T {args.pgbench_seconds:g}:"
    )
    print_table(
        ["clients", "claims/s", "rows/s", "latency-ms", "PG-CPU-ms/claim", "failed"],
        [
            [
                str(r["clients"]),
                fmt(r["per_second"], 1),
                fmt(r["rows_per_second"], 1),
                fmt(r["latency_ms"], 1),
                fmt(r["postgres_cpu_ms"], 2),
                str(r["failed"]),
            ]
            for r in model["claims"]
        ],
    )
    print(f"renewals of one daemon's leases ({args.hosts // args.model_daemons:,} rows each):")
    print_table(
        ["clients", "renewals/s", "rows/s", "latency-ms", "PG-CPU-ms/renewal"],
        [
            [
                str(r["clients"]),
                fmt(r["per_second"], 1),
                fmt(r["rows_per_second"], 0),
                fmt(r["latency_ms"], 1),
                fmt(r["postgres_cpu_ms"], 2),
            ]
            for r in model["renewals"]
        ],
    )
    print(
        f"whole ticks (HostLeases.tick of {args.model_daemons} daemons, {args.tick_clients} at "
        f"once, back to back for {args.tick_seconds:g} s):"
    )
    print_table(
        ["queued-URLs", "ticks/s", "latency-ms", "PG-CPU-ms/tick", "client-CPU-ms/tick"],
        [
            [
                f"{t['queued_urls']:,}",
                fmt(t["ticks_per_second"], 1),
                fmt(t["latency_ms"], 0),
                fmt(t["postgres_cpu_ms"], 1),
                fmt(t["client_cpu_ms"], 1),
            ]
            for t in model["ticks"]
        ],
    )
    for t in model["ticks"]:
        print(f"a tick's statements at {t['queued_urls']:,} queued URLs, EXPLAIN ANALYZE ms:")
        for sql, ms in t["statements_ms"].items():
            print(f"  {ms:8.1f}  {sql[:88]}")
        print("  and the census's, once a tick interval among all the daemons:")
        for sql, ms in t["census_statements_ms"].items():
            print(f"  {ms:8.1f}  {sql[:88]}")
    line = fit_line([(t["queued_urls"], t["postgres_cpu_ms"] / 1000) for t in model["ticks"]])
    census = fit_line([(t["queued_urls"], t["census_ms"] / 1000) for t in model["ticks"]])
    measured = {t["queued_urls"] for t in model["ticks"]}
    sizes = sorted(measured | {10 * args.hosts, 100 * args.hosts})
    rows = lease_model(
        line, sizes, daemons=args.model_daemons, lease_seconds=args.lease_seconds, census=census
    )
    print(
        f"model: a daemon ticks every {args.lease_seconds / TICKS_PER_LEASE:g} s (lease_seconds "
        f"{args.lease_seconds:g} / {TICKS_PER_LEASE}); a tick costs PostgreSQL "
        f"{line[0] * 1000:.1f} ms + {line[1] * 1e6:.3f} ms per 1,000 queued URLs of CPU, "
        f"the census {census[0] * 1000:.1f} ms + {census[1] * 1e6:.3f} ms (EXPLAIN ANALYZE)"
    )
    print_table(
        [
            "queued-URLs",
            "PG-ms/tick",
            "PG-ms/census",
            f"ticks/s-of-{args.model_daemons}",
            "PG-cores-needed",
            "daemons-a-core-serves",
            "",
        ],
        [
            [
                f"{r.queued_urls:,}",
                fmt(r.tick_cpu_s * 1000, 1),
                fmt(r.census_cpu_s * 1000, 1),
                fmt(r.ticks_per_second, 2),
                fmt(r.cores_needed, 2),
                fmt(r.daemons_per_core, 0),
                "measured" if r.queued_urls in measured else "extrapolated",
            ]
            for r in rows
        ],
    )
    best = max((c["per_second"] for c in model["claims"]), default=None)
    if best:
        print(
            "claims: at most one claim statement a tick, "
            f"{ticks_needed(args.model_daemons, args.lease_seconds):.1f}/s of "
            f"{args.model_daemons} daemons, against {best:.0f}/s sustained here"
        )
    return rows


# ---------------------------------------------------------------- the command


def command(args: argparse.Namespace, parts: list[str] | None = None) -> str:
    words = ["python", "bench/cluster.py", "--parts", *(parts or args.parts)]
    if "crawl" in (parts or args.parts):
        words += ["--daemons", *map(str, args.daemons), "--modes", *args.modes]
        words += ["--runs", str(args.runs), "--duration", f"{args.duration:g}"]
        words += ["--polite-delay", f"{args.polite_delay:g}"]
    words += ["--lease-seconds", f"{args.lease_seconds:g}"]
    if "model" in (parts or args.parts):
        words += ["--hosts", str(args.hosts), "--model-daemons", str(args.model_daemons)]
        words += [
            "--clients",
            *map(str, args.clients),
            "--queued-per-host",
            *map(str, args.queued_per_host),
        ]
    return shlex.join(words)


def write_json(args: argparse.Namespace, results: dict[str, Any]) -> None:
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=1, default=str))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--parts", nargs="+", choices=("crawl", "model"), default=["crawl", "model"]
    )
    parser.add_argument("--daemons", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--duration", type=float, default=60.0, help="seconds, each daemon")
    parser.add_argument("--polite-delay", type=float, default=1.0, help="polite mode's --delay")
    parser.add_argument("--lease-seconds", type=float, default=60.0)
    parser.add_argument("--realweb", type=Path, default=REALWEB, help="realweb.py's --dir")
    parser.add_argument("--hosts", type=int, default=100_000, help="host leases, the model's")
    parser.add_argument("--model-daemons", type=int, default=100)
    parser.add_argument("--free-fraction", type=float, default=0.01)
    parser.add_argument("--claim-limit", type=int, default=1)
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 2, 4, 8, 16, 32])
    parser.add_argument("--renew-clients", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--pgbench-seconds", type=float, default=5.0)
    parser.add_argument("--queued-per-host", type=int, nargs="+", default=[1, 10])
    parser.add_argument("--tick-clients", type=int, default=4)
    parser.add_argument("--tick-seconds", type=float, default=10.0)
    parser.add_argument("--json", type=Path, help="write every run here")
    args = parser.parse_args(argv)
    results: dict[str, Any] = {
        "command": command(args),
        "settings": vars(args) | {"realweb": str(args.realweb), "json": str(args.json)},
    }
    started = time.monotonic()
    with postgres() as server:
        if "model" in args.parts:
            model = run_model(server, args, results)
            results["model_seconds"] = time.monotonic() - started
        if "crawl" in args.parts:
            runs = run_crawls(server, args, results)
    results["seconds"] = time.monotonic() - started
    if "crawl" in args.parts:
        results["summary"] = print_crawl(args, runs)
    if "model" in args.parts:
        results["lease_model"] = [vars(r) for r in print_model(args, model)]
    print(f"\n(the benchmark took {results['seconds'] / 60:.1f} minutes)")
    write_json(args, results)


if __name__ == "__main__":
    main()
