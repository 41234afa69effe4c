"""Many hosts on loopback: a web of N hosts served by one nginx, and polite crawls of it.

    python -m bench many-hosts setup --hosts 1000 [--dir /tmp/manyhosts] [--port 8081]
        [--docs /usr/share/doc/python3/html] [--names] [--dns-port 5353]
    python -m bench many-hosts start | stop | status [--dir /tmp/manyhosts]
    python -m bench many-hosts run [--dir /tmp/manyhosts] [--duration 90] [--runs 3]
        [--delay 1] [--kinds polite off bare] [--crawler-args "..."] [--json FILE]

The web. Host n (1..N) is the loopback address 127.2.0.0 + n (Linux routes all of
127/8 to lo), port --port, apart from the real web's 127.0.0.11-18:8800 and the
testbed's 127.0.0.x:8080, so all run at once. Every host serves the same documentation
tree (Debian's python3-doc: 530 pages; its own index is /index.html) and at / a root
page of its own linking to /index.html and to 8 other hosts' roots, drawn at random
with a fixed seed. One nginx serves them all: one server listening on each address
(nginx binds each `listen` line; nothing binds beyond loopback), the root page picked
by $server_addr. With --names, host 12 is also h00012.manyhosts.test, answered by
dnsmasq on 127.0.0.1:--dns-port; a root asked for by name links to the other roots by
name, and seeds-names.txt lists the roots by name. nginx logs each request (its end
time and duration, host address, status, body bytes, path) to DIR/logs/access.log.

The benchmark. Each run crawls the web from all N roots for --duration seconds, kinds
interleaved (the order rotates from run to run): `polite` is `crawler run` with
--delay and otherwise its defaults; `off` is politeness off (--delay 0, 16 requests at
once a host); `bare` is ../shared/bench/bare_loop.py, a loop that does nothing but
fetch, parse and follow (skipped when the shared folder is absent). Measured at nginx,
by request start (its log time less the request's time): pages (answers 200, robots.txt
aside) a second in 10 s windows and after the first 30 s, their mean size, hosts asked
in each window, consecutive requests to one host whose starts are closer than the
delay, and requests for a URL already asked in the run. Measured on the process: CPU
seconds (the crawler and the worker processes it reaped) a page, a megabyte of pages
and a second of the run (cores busy, of os.cpu_count()), the main process's peak RSS
(VmHWM) and the process tree's (the sum of its VmRSS, sampled). The politeness bound is
N / delay: every host holds more pages than a run can take from it.

Needs Debian's nginx and python3-doc, and dnsmasq-base for names (apt-get install).
nginx holds a descriptor a host, and one a connection: `start` and `run` raise the
open files limit to the hard one (ulimit -Hn), or say it is too low; nginx takes no
more connections than the rest holds, closing idle ones for new ones.
"""

from __future__ import annotations

import argparse
import getpass
import ipaddress
import itertools
import json
import os
import random
import resource
import shlex
import shutil
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BARE_LOOP = ROOT.parent / "shared" / "bench" / "bare_loop.py"
DEFAULT_DIR = Path("/tmp/manyhosts")
DEFAULT_DOCS = Path("/usr/share/doc/python3/html")  # python3-doc
FIRST = ipaddress.IPv4Address("127.2.0.0")
DOMAIN = "manyhosts.test"
BY_NAME = r"~\.manyhosts\.test$"  # nginx's regular expression for a Host of DOMAIN
LINKS = 8  # other hosts' roots on each root page
WINDOW = 10.0  # seconds a rate is counted over
WARMUP = 30.0  # seconds before the steady rate is counted
TOLERANCE = 0.002  # nginx logs in milliseconds: a start is known to within 2 ms
TOPIC = "python asyncio event loop coroutines tasks"
OFF = ("--delay", "0", "--per-host-concurrency", "16")
KINDS = ("polite", "off", "bare")
OPEN_FILES = 1000  # nginx's cache of open files: the docs' pages (each root is asked once)
MOST_FILES = 65_536  # open files asked for, at most
LOG_FORMAT = "$msec\\t$request_time\\t$server_addr\\t$status\\t$body_bytes_sent\\t$request_uri"


def address(n: int) -> str:
    return str(FIRST + n)


def name(n: int) -> str:
    return f"h{n:05d}.{DOMAIN}"


def neighbours(hosts: int, seed: int) -> list[list[int]]:
    """For each host 1..N (index n - 1), the other hosts its root page links to."""
    chooser = random.Random(seed)
    return [
        [m + (m >= n) for m in chooser.sample(range(1, hosts), min(LINKS, hosts - 1))]
        for n in range(1, hosts + 1)
    ]  # m + (m >= n) skips n itself


def root_page(n: int, links: list[int], port: int, by_name: bool) -> str:
    def url(m: int) -> str:
        return f"http://{name(m) if by_name else address(m)}:{port}/"

    items = "\n".join(f'<li><a href="{url(m)}">host {m}</a></li>' for m in links)
    return f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Host {n}</title></head><body>
<h1>Host {n} of the many-hosts web</h1>
<p><a href="/index.html">The Python documentation</a> on this host.</p>
<p>Other hosts:</p>
<ul>
{items}
</ul>
</body></html>
"""


def setup(
    directory: Path,
    hosts: int,
    port: int,
    docs: Path,
    seed: int,
    user: str | None,
    dns_port: int | None,
) -> None:
    """Write the web's state directory: web.json, nginx.conf, the root pages, robots.txt,
    the seeds files and the names' hosts file."""
    if not 1 <= hosts <= 65_000:
        raise SystemExit(f"--hosts {hosts}: between 1 and 65,000 (addresses 127.2.0.1 and up)")
    if not (docs / "index.html").is_file():
        raise SystemExit(f"{docs}: no index.html; apt-get install python3-doc, or give --docs")
    if nginx_pid(directory):
        raise SystemExit(f"the web in {directory} is running: stop it first")
    for part in ("logs", "tmp", "roots/addresses", "roots/names"):
        (directory / part).mkdir(parents=True, exist_ok=True)
    for n, links in enumerate(neighbours(hosts, seed), start=1):
        for by_name, folder in ((False, "addresses"), (True, "names")):
            page = root_page(n, links, port, by_name)
            (directory / "roots" / folder / f"{address(n)}.html").write_text(page)
    (directory / "robots.txt").write_text("User-agent: *\nAllow: /\n")
    (directory / "seeds.txt").write_text(
        "".join(f"http://{address(n)}:{port}/\n" for n in range(1, hosts + 1))
    )
    (directory / "seeds-names.txt").write_text(
        "".join(f"http://{name(n)}:{port}/\n" for n in range(1, hosts + 1))
    )
    (directory / "names.hosts").write_text(
        "".join(f"{address(n)} {name(n)}\n" for n in range(1, hosts + 1))
    )
    web = {"hosts": hosts, "port": port, "docs": str(docs.resolve()), "seed": seed}
    (directory / "web.json").write_text(json.dumps(web | {"dns_port": dns_port}) + "\n")
    listens = "\n".join(f"        listen {address(n)}:{port};" for n in range(1, hosts + 1))
    (directory / "nginx.conf").write_text(f"""# python -m bench many-hosts setup: {hosts} hosts
{f"user {user};" if user else ""}
worker_processes 1;  # the crawler needs the other core
pid {directory}/nginx.pid;
error_log {directory}/logs/error.log warn;
# A listening socket, a connection and a cached file each take a descriptor. With no
# more connections than descriptors, nginx closes idle keep-alive connections to accept
# new ones instead of failing to accept: a crawl of many hosts keeps one to each.
events {{ worker_connections {file_limit(hosts) - OPEN_FILES - 64}; }}
http {{
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    log_format bench '{LOG_FORMAT}';
    access_log {directory}/logs/access.log bench buffer=64k flush=1s;
    sendfile on;
    tcp_nodelay on;
    keepalive_requests 100000;
    absolute_redirect off;
    server_tokens off;
    open_file_cache max={OPEN_FILES} inactive=60s;
    client_body_temp_path {directory}/tmp/body;
    proxy_temp_path {directory}/tmp/proxy;
    fastcgi_temp_path {directory}/tmp/fastcgi;
    uwsgi_temp_path {directory}/tmp/uwsgi;
    scgi_temp_path {directory}/tmp/scgi;
    # a root asked for by name links to the other roots by name
    map $host $roots {{ {BY_NAME} names; default addresses; }}
    server {{
{listens}
        root {docs.resolve()};
        location = / {{ root {directory}/roots; try_files /$roots/$server_addr.html =404; }}
        location = /robots.txt {{ alias {directory}/robots.txt; }}
    }}
}}
""")


def read_web(directory: Path) -> dict[str, Any]:
    path = directory / "web.json"
    if not path.is_file():
        raise SystemExit(f"{path}: missing; run `python -m bench many-hosts setup` first")
    return dict(json.loads(path.read_text()))


def read_pid(path: Path) -> int | None:
    try:
        pid = int(path.read_text())
        os.kill(pid, 0)
    except (OSError, ValueError):
        return None
    return pid


def nginx_pid(directory: Path) -> int | None:
    return read_pid(directory / "nginx.pid")


def file_limit(hosts: int) -> int:
    """The open files nginx and the crawler may have: the hard limit (ulimit -Hn, at most
    MOST_FILES), to which `start` and `run` raise the soft one. nginx binds a socket a
    host and caches OPEN_FILES files; what is left holds connections."""
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    limit = MOST_FILES if hard == resource.RLIM_INFINITY else min(hard, MOST_FILES)
    needed = hosts + OPEN_FILES + 1024
    if limit < needed:
        raise SystemExit(f"ulimit -Hn is {hard}: {hosts:,} hosts need {needed} open files")
    return limit


def raise_file_limit(hosts: int) -> None:
    """The soft limit of open files raised to file_limit, for this process's children."""
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (file_limit(hosts), hard))


def answers(url: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=1) as answer:
                answer.read()
            return
        except OSError as error:
            if time.monotonic() > deadline:
                raise SystemExit(f"{url} does not answer: {error}") from None
            time.sleep(0.1)


def start(directory: Path) -> None:
    """Start nginx (and dnsmasq, with names), each writing its pid file in `directory`,
    and wait until the first and last hosts and names answer."""
    web = read_web(directory)
    raise_file_limit(web["hosts"])
    if nginx_pid(directory) is None:
        binary = shutil.which("nginx") or "/usr/sbin/nginx"
        files = ("-e", str(directory / "logs/error.log"), "-c", str(directory / "nginx.conf"))
        subprocess.run([binary, "-p", str(directory), *files], check=True)
    for n in {1, web["hosts"]}:
        answers(f"http://{address(n)}:{web['port']}/")
    if web["dns_port"] is not None:
        start_dns(directory, web["dns_port"], web["hosts"])


def start_dns(directory: Path, port: int, hosts: int) -> None:
    """dnsmasq on 127.0.0.1:`port`, answering the names of names.hosts and no others."""
    if read_pid(directory / "dnsmasq.pid") is None:
        binary = shutil.which("dnsmasq") or "/usr/sbin/dnsmasq"
        only_these = ("--conf-file=/dev/null", "--no-resolv", "--no-hosts", f"--local=/{DOMAIN}/")
        where = (f"--port={port}", "--listen-address=127.0.0.1", "--bind-interfaces")
        names = (f"--addn-hosts={directory / 'names.hosts'}", "--local-ttl=300")
        pid = f"--pid-file={directory / 'dnsmasq.pid'}"
        log = f"--log-facility={directory / 'logs' / 'dns.log'}"
        user = f"--user={getpass.getuser()}"  # as root too: the files may be private
        subprocess.run([binary, *only_these, *where, *names, pid, log, user], check=True)
    deadline = time.monotonic() + 10
    for n in {1, hosts}:
        while resolve(name(n), port) != [address(n)]:
            if time.monotonic() > deadline:
                raise SystemExit(f"{name(n)} does not resolve to {address(n)}")
            time.sleep(0.1)


def stop(directory: Path) -> None:
    for pid_file in ("nginx.pid", "dnsmasq.pid"):
        pid = read_pid(directory / pid_file)
        if pid is None:
            continue
        os.kill(pid, signal.SIGQUIT if pid_file == "nginx.pid" else signal.SIGTERM)
        deadline = time.monotonic() + 10
        while read_pid(directory / pid_file) == pid and time.monotonic() < deadline:
            time.sleep(0.1)


def resolve(host: str, port: int) -> list[str]:
    """The A records the DNS server on 127.0.0.1:`port` gives `host` (a raw query: no
    DNS library is needed)."""
    question = b"".join(bytes([len(p)]) + p.encode() for p in host.split(".")) + b"\0"
    query = struct.pack(">6H", 0x1234, 0x0100, 1, 0, 0, 0) + question + struct.pack(">2H", 1, 1)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as client:
        client.settimeout(1)
        client.sendto(query, ("127.0.0.1", port))
        try:
            reply = client.recv(512)
        except OSError:
            return []
    count = struct.unpack(">H", reply[6:8])[0]
    at, found = 12 + len(question) + 4, []
    for _ in range(count):
        at += 2 if reply[at] >= 0xC0 else reply.index(b"\0", at) + 1 - at  # the name
        kind, _klass, _ttl, length = struct.unpack(">2HIH", reply[at : at + 10])
        if kind == 1:
            found.append(socket.inet_ntoa(reply[at + 10 : at + 14]))
        at += 10 + length
    return found


# ---------------------------------------------------------------- nginx's log, counted


@dataclass(frozen=True, slots=True)
class Request:
    start: float  # epoch seconds: nginx's log time less the request's time
    host: str
    status: int
    size: int  # the body's bytes
    path: str


def read_log(path: Path, offset: int) -> list[Request]:
    """The requests logged from byte `offset` on."""
    with path.open("rb") as log:
        log.seek(offset)
        lines = log.read().decode("utf-8", "replace").splitlines()
    requests = []
    for line in lines:
        end, took, host, status, size, uri = line.split("\t")
        requests.append(Request(float(end) - float(took), host, int(status), int(size), uri))
    return requests


def count(requests: list[Request], t0: float, duration: float, delay: float) -> dict[str, Any]:
    """A run's figures from the requests nginx logged, timed from `t0` (the launch).
    Requests that started before it are someone else's, logged late (nginx buffers)."""
    requests = [r for r in requests if r.start >= t0]
    during = [r for r in requests if r.start < t0 + duration]
    pages = [r for r in during if r.status == 200 and r.path != "/robots.txt"]
    windows = []
    for at in range(int(duration // WINDOW)):
        low, high = t0 + at * WINDOW, t0 + (at + 1) * WINDOW
        windows.append(
            {
                "pages_per_second": sum(low <= r.start < high for r in pages) / WINDOW,
                "hosts": len({r.host for r in during if low <= r.start < high}),
            }
        )
    steady = [r for r in pages if r.start >= t0 + WARMUP]
    starts = defaultdict(list)
    for r in sorted(requests, key=lambda r: r.start):
        starts[r.host].append(r.start)
    gaps = sum(
        later - earlier < delay - TOLERANCE
        for times in starts.values()
        for earlier, later in itertools.pairwise(times)
    )
    asked = Counter((r.host, r.path) for r in requests)
    return {
        "requests": len(requests),
        "pages": len(pages),
        "pages_per_second": len(pages) / duration,
        "page_kb": sum(r.size for r in pages) / len(pages) / 1000 if pages else None,
        "steady_pages_per_second": len(steady) / (duration - WARMUP) if duration > WARMUP else None,
        "requests_per_second": len(during) / duration,
        "hosts_asked": len(starts),
        "windows": windows,
        "gaps_below_delay": gaps if delay else None,
        "asked_again": sum(times - 1 for times in asked.values()),
    }


# ---------------------------------------------------------------- one run


def rss_mb(pid: int, field: str) -> float:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0.0
    line = next((line for line in status.splitlines() if line.startswith(field + ":")), "0 0")
    return int(line.split()[1]) / 1024


def tree(pid: int) -> list[int]:
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return [pid]
    return [pid, *(p for child in children for p in tree(int(child)))]


def watch(process: subprocess.Popen[bytes], deadline: float) -> dict[str, Any]:
    """Wait for the process, sampling its memory; past `deadline`, SIGINT, and 30 s
    later SIGKILL. Its CPU seconds include the children it reaped (its workers)."""
    peak_main = peak_tree = 0.0
    stopping = False
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            break
        peak_main = max(peak_main, rss_mb(process.pid, "VmHWM"))
        peak_tree = max(peak_tree, sum(rss_mb(p, "VmRSS") for p in tree(process.pid)))
        if time.time() > deadline:
            process.send_signal(signal.SIGKILL if stopping else signal.SIGINT)
            stopping, deadline = True, deadline + 30
        time.sleep(0.5)
    process.returncode = os.waitstatus_to_exitcode(status)
    return {
        "exit_code": process.returncode,
        "cpu_seconds": usage.ru_utime + usage.ru_stime,
        "peak_rss_mb": peak_main,
        "tree_peak_rss_mb": peak_tree,
    }


def command(kind: str, args: argparse.Namespace, seeds: Path, scratch: Path) -> list[str]:
    limits = ("--max-seconds", str(args.duration), "--max-pages", str(10**9))
    if kind == "bare":
        return [sys.executable, str(BARE_LOOP), str(seeds), "--concurrency", "64", *limits]
    politeness = OFF if kind == "off" else ("--delay", str(args.delay))
    database = f"sqlite+aiosqlite:///{scratch}/crawl.db"
    return [
        *(sys.executable, "-m", "crawler", "run", "--db", database, "--seeds-file", str(seeds)),
        *("--topic", TOPIC, "--allow-private-networks", "--metrics-port", "0"),
        *("--duration", str(args.duration), *politeness, *shlex.split(args.crawler_args)),
    ]


def run_once(kind: str, args: argparse.Namespace, web: dict[str, Any]) -> dict[str, Any]:
    directory: Path = args.dir
    log = directory / "logs" / "access.log"
    offset = log.stat().st_size if log.exists() else 0
    (directory / "runs").mkdir(exist_ok=True)
    output = directory / "runs" / f"{kind}.log"
    with tempfile.TemporaryDirectory() as scratch, output.open("wb") as sink:
        t0 = time.time()
        process = subprocess.Popen(
            command(kind, args, directory / "seeds.txt", Path(scratch)),
            cwd=ROOT,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
        usage = watch(process, t0 + args.duration + 60)
        usage["cores_busy"] = usage["cpu_seconds"] / (time.time() - t0)
    if usage["exit_code"] != 0:
        print(f"{kind}: exit code {usage['exit_code']}; its output is in {output}")
    time.sleep(1.5)  # nginx flushes its log each second
    delay = 0.0 if kind != "polite" else args.delay
    row = {"kind": kind, "hosts": web["hosts"], "delay": delay, "duration": args.duration}
    row |= count(read_log(log, offset), t0, args.duration, delay) | usage
    row["cpu_ms_per_page"] = 1000 * row["cpu_seconds"] / row["pages"] if row["pages"] else None
    megabytes = row["pages"] * (row["page_kb"] or 0) / 1000
    row["cpu_ms_per_mb"] = 1000 * row["cpu_seconds"] / megabytes if megabytes else None
    row["politeness_bound"] = web["hosts"] / delay if delay else None
    return row


# ---------------------------------------------------------------- the table


def median(values: list[Any]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def fmt(value: float | None, digits: int = 0) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


COLUMNS = {  # heading: (field, digits)
    "pages/s": ("pages_per_second", 0),
    "after 30 s": ("steady_pages_per_second", 0),
    "bound": ("politeness_bound", 0),
    "requests/s": ("requests_per_second", 0),
    "hosts asked": ("hosts_asked", 0),
    "KB a page": ("page_kb", 0),
    "CPU ms/page": ("cpu_ms_per_page", 2),
    "CPU ms/MB": ("cpu_ms_per_mb", 1),
    "cores busy": ("cores_busy", 2),
    "peak MB": ("peak_rss_mb", 0),
    "tree MB": ("tree_peak_rss_mb", 0),
    "gaps < delay": ("gaps_below_delay", 0),
    "asked again": ("asked_again", 0),
}

RATIOS = {  # name: (kind, over kind, field)
    "polite / off, pages/s after 30 s": ("polite", "off", "steady_pages_per_second"),
    "polite / off, requests/s": ("polite", "off", "requests_per_second"),
    "polite / off, CPU a page": ("polite", "off", "cpu_ms_per_page"),
    "polite / off, CPU a MB": ("polite", "off", "cpu_ms_per_mb"),
    "off / bare, pages/s after 30 s": ("off", "bare", "steady_pages_per_second"),
}


def ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or not b else a / b


def print_table(rounds: list[dict[str, dict[str, Any]]]) -> None:
    """Medians over runs; ratios as the median of each round's ratio."""
    kinds = [kind for kind in KINDS if kind in rounds[0]]
    first = rounds[0][kinds[0]]
    print(
        f"\n{first['hosts']:,} hosts, {first['duration']:g} s runs, {os.cpu_count()} cores;"
        f" medians of {len(rounds)}"
    )
    print(f"{'':8}" + "".join(f"{heading:>13}" for heading in COLUMNS))
    for kind in kinds:
        cells = [median([r[kind][field] for r in rounds]) for field, _ in COLUMNS.values()]
        digits = [d for _, d in COLUMNS.values()]
        print(f"{kind:8}" + "".join(f"{fmt(c, d):>13}" for c, d in zip(cells, digits, strict=True)))
    for kind in kinds:
        windows = zip(*(r[kind]["windows"] for r in rounds), strict=False)
        print(
            f"{kind}, each 10 s: pages/s (hosts asked): "
            + ", ".join(
                f"{fmt(median([w['pages_per_second'] for w in ws]))}"
                f" ({fmt(median([w['hosts'] for w in ws]))})"
                for ws in windows
            )
        )
    for label, (kind, other, field) in RATIOS.items():
        if kind in kinds and other in kinds:
            values = [ratio(r[kind][field], r[other][field]) for r in rounds]
            print(f"{label}: {fmt(median(values), 2)}")
    if "polite" in kinds and "off" in kinds:
        target = [
            ratio(
                r["polite"]["steady_pages_per_second"],
                min(r["polite"]["politeness_bound"], r["off"]["steady_pages_per_second"] or 0),
            )
            for r in rounds
        ]
        print(f"polite after 30 s / min(bound, off after 30 s): {fmt(median(target), 2)}")


def run(args: argparse.Namespace) -> None:
    web = read_web(args.dir)
    if nginx_pid(args.dir) is None:
        raise SystemExit(f"the web in {args.dir} is not running: python -m bench many-hosts start")
    kinds = list(args.kinds)
    if "bare" in kinds and not BARE_LOOP.is_file():
        print(f"bare: skipped, {BARE_LOOP} is absent")
        kinds.remove("bare")
    raise_file_limit(web["hosts"])
    rounds = []
    for number in range(args.runs):
        shift = number % len(kinds)
        order = kinds[shift:] + kinds[:shift]
        rounds.append({kind: run_once(kind, args, web) for kind in order})
        for kind in order:
            row = rounds[-1][kind]
            print(
                f"run {number + 1} {kind}: {row['pages']} pages, "
                f"{fmt(row['steady_pages_per_second'])} pages/s after 30 s"
            )
    print_table(rounds)
    if args.json:
        args.json.write_text(
            json.dumps({"web": web, "args": sys.argv[1:], "runs": rounds}, indent=1) + "\n"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)
    for command_name in ("setup", "start", "stop", "status", "run"):
        commands.add_parser(command_name).add_argument("--dir", type=Path, default=DEFAULT_DIR)
    set_up = commands.choices["setup"]
    set_up.add_argument("--hosts", type=int, default=1000)
    set_up.add_argument("--port", type=int, default=8081)
    set_up.add_argument("--docs", type=Path, default=DEFAULT_DOCS, help="the HTML tree served")
    set_up.add_argument("--seed", type=int, default=0, help="of the links between hosts")
    set_up.add_argument("--user", help="nginx's worker user (default: nobody when root)")
    set_up.add_argument("--names", action="store_true", help="names too, served by dnsmasq")
    set_up.add_argument("--dns-port", type=int, default=5353)
    crawl = commands.choices["run"]
    crawl.add_argument("--duration", type=float, default=90.0)
    crawl.add_argument("--runs", type=int, default=3)
    crawl.add_argument("--delay", type=float, default=1.0, help="the polite runs' --delay")
    crawl.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS))
    crawl.add_argument("--crawler-args", default="", help="more flags for both crawler kinds")
    crawl.add_argument("--json", type=Path, help="write every run here")
    args = parser.parse_args()
    args.dir = args.dir.resolve()
    if args.command == "setup":
        user = args.user or ("nobody nogroup" if os.geteuid() == 0 else None)
        dns_port = args.dns_port if args.names else None
        setup(args.dir, args.hosts, args.port, args.docs, args.seed, user, dns_port)
        print(f"{args.hosts:,} hosts written to {args.dir}; seeds: {args.dir / 'seeds.txt'}")
    elif args.command == "start":
        start(args.dir)
    elif args.command == "stop":
        stop(args.dir)
    elif args.command == "status":
        web, pid = read_web(args.dir), nginx_pid(args.dir)
        print(
            f"{web['hosts']:,} hosts on 127.2.0.1-{address(web['hosts'])}:{web['port']}, "
            f"nginx {'pid ' + str(pid) if pid else 'stopped'}"
        )
        if web["dns_port"] is not None:
            print(f"names: {name(1)} resolves to {resolve(name(1), web['dns_port'])}")
    else:
        run(args)


if __name__ == "__main__":
    main()
