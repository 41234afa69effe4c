"""Daemons sharing one crawl through PostgreSQL: how the crawl scales with them on this
machine.

    python bench/cluster.py [--daemons 1 2 4] [--modes polite fast] [--runs 3]
        [--duration 60] [--json bench/results/cluster.json]

One PostgreSQL server (Debian's binaries, started as the tests start theirs:
tests/postgres.py) serves the whole benchmark. For each mode and number of daemons N, N
daemon processes (`python -m crawler run --db postgresql+asyncpg://... --daemon-id
bench-I`) crawl the real web of `bench/realweb/` (nginx on 127.0.0.11-18:8800, its
seeds, the topic "sparse matrix") into a fresh database, started at once, each stopping
at `--duration` (a per-daemon limit). polite: the crawler's politeness (`--delay`,
default 1 s, one request at a time a host); fast: politeness off as bench/throughput.py
has it (`--delay 0`, 32 requests at once, all to one host if need be). Runs interleave
(the order rotates); medians; ratios against N = 1 of the same mode, in the same
benchmark. Measured per run:

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

Every table is printed with the command that reproduces it; --json keeps every run.
Needs nginx serving the real web (`python bench/realweb/realweb.py start`) and Debian's
postgresql package.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
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
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from bench.harness import rotated  # noqa: E402

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
    print(f"    {command(args)}")
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


# ---------------------------------------------------------------- the command


def command(args: argparse.Namespace) -> str:
    words = ["python", "bench/cluster.py", "--daemons", *map(str, args.daemons)]
    words += ["--modes", *args.modes, "--runs", str(args.runs)]
    words += ["--duration", f"{args.duration:g}", "--polite-delay", f"{args.polite_delay:g}"]
    words += ["--lease-seconds", f"{args.lease_seconds:g}"]
    return shlex.join(words)


def write_json(args: argparse.Namespace, results: dict[str, Any]) -> None:
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=1, default=str))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--daemons", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--duration", type=float, default=60.0, help="seconds, each daemon")
    parser.add_argument("--polite-delay", type=float, default=1.0, help="polite mode's --delay")
    parser.add_argument("--lease-seconds", type=float, default=60.0)
    parser.add_argument("--realweb", type=Path, default=REALWEB, help="realweb.py's --dir")
    parser.add_argument("--json", type=Path, help="write every run here")
    args = parser.parse_args(argv)
    results: dict[str, Any] = {
        "command": command(args),
        "settings": vars(args) | {"realweb": str(args.realweb), "json": str(args.json)},
    }
    started = time.monotonic()
    with postgres() as server:
        runs = run_crawls(server, args, results)
    results["seconds"] = time.monotonic() - started
    results["summary"] = print_crawl(args, runs)
    print(f"\n(the benchmark took {results['seconds'] / 60:.1f} minutes)")
    write_json(args, results)


if __name__ == "__main__":
    main()
