"""The many-hosts benchmark (`python -m bench many-hosts`) on a web of 20 hosts whose
documentation tree is written here: nginx's log counted; and, where nginx is
installed, what each address serves, the names dnsmasq answers, and the row a short
polite run gives."""

from __future__ import annotations

import grp
import json
import os
import pwd
import re
import resource
import shutil
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from tests.bench.scripts import load_script

ROOT = Path(__file__).resolve().parents[2]
HOSTS = 20
DOCS = {
    "index.html": '<html><body><a href="a.html">a</a> <a href="sub/c.html">c</a></body></html>',
    "a.html": '<html><body><a href="index.html">up</a> <a href="b.html">b</a></body></html>',
    "b.html": '<html><body><a href="/license.html">license</a></body></html>',
    "license.html": "<html><body>The license.</body></html>",
    "sub/c.html": '<html><body><a href="../a.html">a</a></body></html>',
}

needs_nginx = pytest.mark.skipif(
    shutil.which("nginx") is None and not Path("/usr/sbin/nginx").exists(),
    reason="nginx is not installed",
)
has_dnsmasq = shutil.which("dnsmasq") is not None or Path("/usr/sbin/dnsmasq").exists()


@pytest.fixture(scope="module")
def manyhosts() -> ModuleType:
    return load_script("manyhosts.py")


def bench(*arguments: str | Path, files: int | None = None) -> str:
    """`python -m bench many-hosts ...`; with `files`, under that open files limit."""

    def limit_files() -> None:
        if files is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (files, files))

    command = [sys.executable, "-m", "bench", "many-hosts", *map(str, arguments)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, preexec_fn=limit_files)
    assert done.returncode == 0, done.stderr
    return done.stdout


def free_port(kind: socket.SocketKind, address: str) -> int:
    with socket.socket(socket.AF_INET, kind) as probe:
        probe.bind((address, 0))
        return int(probe.getsockname()[1])


def free_dns_port() -> int:
    """A port free on 127.0.0.1 for UDP and for TCP: dnsmasq binds both."""
    for _ in range(20):
        port = free_port(socket.SOCK_DGRAM, "127.0.0.1")
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
        return port
    raise AssertionError("no port on 127.0.0.1 free for both UDP and TCP in 20 tries")


class Web:
    """The web the tests share: its state directory, port and DNS port (None: no names)."""

    def __init__(self, state: Path, port: int, dns_port: int | None) -> None:
        self.state, self.port, self.dns_port = state, port, dns_port


def set_up(tmp_path: Path, *options: str, files: int | None = None) -> tuple[Path, int]:
    """A web of HOSTS hosts serving the tree of DOCS, set up in `tmp_path`: its state
    directory and port."""
    for path, text in DOCS.items():
        (tmp_path / "docs" / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "docs" / path).write_text(text)
    state, port = tmp_path / "state", free_port(socket.SOCK_STREAM, "127.2.0.1")
    # nginx's workers run as this user: tmp_path is private
    user = f"{pwd.getpwuid(os.getuid()).pw_name} {grp.getgrgid(os.getgid()).gr_name}"
    where = (
        "--dir",
        state,
        "--hosts",
        str(HOSTS),
        "--port",
        str(port),
        "--docs",
        tmp_path / "docs",
    )
    bench("setup", *where, "--user", user, *options, files=files)
    return state, port


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Web]:
    """The web of set_up, with names where dnsmasq is installed: set up and started
    once, as the scripts take a second to start."""
    if shutil.which("nginx") is None and not Path("/usr/sbin/nginx").exists():
        pytest.skip("nginx is not installed")
    dns_port = free_dns_port() if has_dnsmasq else None
    names = ("--names", "--dns-port", str(dns_port)) if dns_port else ()
    state, port = set_up(tmp_path_factory.mktemp("manyhosts"), *names)
    try:
        bench("start", "--dir", state)
        yield Web(state, port, dns_port)
    finally:
        bench("stop", "--dir", state)


def get(url: str, host: str | None = None) -> str:
    request = urllib.request.Request(url, headers={"Host": host} if host else {})
    with urllib.request.urlopen(request, timeout=5) as answer:
        return str(answer.read().decode())


def test_each_address_serves_its_root_linking_its_docs_and_eight_other_roots(
    web: Web, manyhosts: ModuleType
) -> None:
    linked = manyhosts.neighbours(HOSTS, 0)
    for n in range(1, HOSTS + 1):
        base = f"http://127.2.0.{n}:{web.port}"
        root = get(base + "/")
        assert f"<title>Host {n}</title>" in root
        docs, *others = re.findall(r'href="([^"]*)"', root)
        assert docs == "/index.html"
        assert others == [f"http://127.2.0.{m}:{web.port}/" for m in linked[n - 1]]
        assert len(set(others)) == 8
        assert f"{base}/" not in others
        assert get(base + "/index.html") == DOCS["index.html"]
        assert get(base + "/license.html") == DOCS["license.html"]  # root-relative links work
        assert get(base + "/robots.txt") == "User-agent: *\nAllow: /\n"
    seeds = (web.state / "seeds.txt").read_text().split()
    assert seeds == [f"http://127.2.0.{n}:{web.port}/" for n in range(1, HOSTS + 1)]


def test_names_resolve_to_their_hosts_and_their_roots_link_by_name(
    web: Web, manyhosts: ModuleType
) -> None:
    if web.dns_port is None:
        pytest.skip("dnsmasq is not installed")
    for n in (1, 7, HOSTS):
        assert manyhosts.resolve(f"h{n:05d}.manyhosts.test", web.dns_port) == [f"127.2.0.{n}"]
    assert manyhosts.resolve(f"h{HOSTS + 1:05d}.manyhosts.test", web.dns_port) == []
    root = get(f"http://127.2.0.7:{web.port}/", host=f"h00007.manyhosts.test:{web.port}")
    others = re.findall(r'href="(http[^"]*)"', root)
    linked = manyhosts.neighbours(HOSTS, 0)[6]
    assert others == [f"http://h{m:05d}.manyhosts.test:{web.port}/" for m in linked]
    seeds = (web.state / "seeds-names.txt").read_text().split()
    assert seeds[6] == f"http://h00007.manyhosts.test:{web.port}/"


def line(
    start: float, host: str, path: str, status: int = 200, took: float = 0.0, size: int = 1000
) -> str:
    """One line as nginx logs it: its time at the request's end, then the request's time."""
    return f"{start + took:.3f}\t{took:.3f}\t{host}\t{status}\t{size}\t{path}\n"


def test_the_log_counts_pages_windows_gaps_and_repeats_by_request_start(
    manyhosts: ModuleType, tmp_path: Path
) -> None:
    a, b, c, d = (f"127.2.0.{n}" for n in range(1, 5))
    earlier = line(990.0, a, "/")  # a run before this one
    log = tmp_path / "access.log"
    log.write_text(
        earlier
        + line(999.5, a, "/index.html")  # before the run, logged late
        + line(1000.0, a, "/robots.txt")
        + line(1001.5, a, "/")
        + line(1002.0, a, "/index.html")  # 0.5 s after the last: a gap
        + line(1003.0, a, "/a.html")  # 1 s after: none
        + line(1035.0, a, "/a.html")  # asked again, after the first 30 s
        + line(1000.2, b, "/robots.txt")
        + line(1000.9, b, "/")  # a gap
        + line(1012.0, b, "/")  # asked again
        + line(1013.0, b, "/missing.html", status=404)  # not a page
        + line(1009.7, c, "/slow.html", took=0.6, size=11_000)  # logged at 1010.3: window 0
        + line(1010.899, c, "/next.html")  # 1.199 s after the slow one started: no gap
        + line(1041.0, c, "/late.html")  # after the run's duration: no page of its rate
        + line(1020.0, d, "/")
        + line(1020.999, d, "/index.html")  # within nginx's millisecond: no gap
    )
    requests = manyhosts.read_log(log, offset=len(earlier))
    counted = manyhosts.count(requests, t0=1000.0, duration=40.0, delay=1.0)
    assert counted["requests"] == 14
    assert counted["pages"] == 10
    assert counted["pages_per_second"] == pytest.approx(10 / 40)
    assert counted["page_kb"] == pytest.approx((9 * 1000 + 11_000) / 10 / 1000)
    windows = [(w["pages_per_second"], w["hosts"]) for w in counted["windows"]]
    assert windows == [(0.5, 3), (0.2, 2), (0.2, 1), (0.1, 1)]
    assert counted["steady_pages_per_second"] == pytest.approx(1 / 10)
    assert counted["requests_per_second"] == pytest.approx(13 / 40)
    assert counted["hosts_asked"] == 4
    assert counted["gaps_below_delay"] == 2
    assert counted["asked_again"] == 2
    assert (
        manyhosts.count(requests, t0=1000.0, duration=40.0, delay=0.0)["gaps_below_delay"] is None
    )


@pytest.mark.slow
@needs_nginx
def test_a_short_polite_run_gives_a_row_counted_at_nginx(web: Web, tmp_path: Path) -> None:
    out = tmp_path / "runs.json"
    printed = bench(
        "run",
        "--dir",
        web.state,
        "--kinds",
        "polite",
        "--runs",
        "1",
        "--duration",
        "10",
        "--delay",
        "0.5",
        "--json",
        out,
    )
    assert "polite" in printed
    (row,) = [run["polite"] for run in json.loads(out.read_text())["runs"]]
    assert row["exit_code"] == 0
    assert row["hosts_asked"] == HOSTS
    assert row["pages"] > HOSTS  # each host's root, and some of its documentation
    assert len(row["windows"]) == 1
    assert row["politeness_bound"] == HOSTS / 0.5
    assert row["gaps_below_delay"] == 0
    assert row["asked_again"] == 0
    assert row["cpu_seconds"] > 0
    assert row["peak_rss_mb"] > 0


@needs_nginx
def test_idle_connections_past_nginxs_descriptors_are_closed_and_new_ones_answered(
    tmp_path: Path,
) -> None:
    """A crawl of thousands of hosts leaves a keep-alive connection idle at each; when
    they outnumber what nginx's open files allow, nginx closes idle ones to answer new
    ones, instead of failing to accept (a web that stalls measures itself)."""
    files, connections = 2_500, 3_000
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < connections + 100:
        pytest.skip(f"ulimit -Hn is {hard}: this test holds {connections} connections")
    state, port = set_up(tmp_path, files=files)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, connections + 100), hard))
    opened: list[socket.socket] = []
    try:
        bench("start", "--dir", state, files=files)
        for n in range(connections):
            client = socket.create_connection((f"127.2.0.{n % HOSTS + 1}", port), timeout=2)
            opened.append(client)
            client.sendall(b"GET /robots.txt HTTP/1.1\r\nHost: bench\r\n\r\n")
            assert client.recv(4096).startswith(b"HTTP/1.1 200"), f"connection {n}"
    except TimeoutError:
        pytest.fail(f"connection {len(opened)} of {connections} was not answered")
    finally:
        for client in opened:
            client.close()
        bench("stop", "--dir", state)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
