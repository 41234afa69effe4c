"""A real web on loopback: Debian documentation packages served by nginx, one host each.

    python bench/realweb/realweb.py install [--dir /tmp/realweb] [--port 8800]
    python bench/realweb/realweb.py start [--dir /tmp/realweb]
    python bench/realweb/realweb.py stop [--dir /tmp/realweb]
    python bench/realweb/realweb.py status [--dir /tmp/realweb]

`install` (as root; idempotent) installs nginx and the packages with apt-get, finds each
package's HTML root and writes, under --dir: `hosts.tsv` (one row a host: address, port,
package, HTML root, seed paths), `seeds.txt` (every host's seed URLs), `robots.txt`
(everything allowed) and `nginx.conf`. `configure` writes the same from HTML trees
given as `--site NAME=ROOT` (no apt-get), for trees of one's own. `start` runs nginx on
that config (one worker process, the crawler needs the other core) and waits until
every seed answers; `stop` stops it. Host i is 127.0.0.(--first-address + i).

Every request is logged to `DIR/logs/access.log` (buffered, flushed each second), so a
benchmark can count what the server saw: `wc -l DIR/logs/access.log`.
"""

from __future__ import annotations

import argparse
import collections
import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

DEFAULT_DIR = Path("/tmp/realweb")
DEFAULT_PORT = 8800  # not the testbed's 8080, which may serve 127.0.0.11 and up too
DEFAULT_FIRST_ADDRESS = 11
HTML_SUFFIXES = (".html", ".htm", ".shtml", ".xhtml")  # what nginx's mime.types calls HTML


@dataclass(frozen=True, slots=True)
class Package:
    """A documentation package, where its HTML lives, and the pages a crawl starts from
    (paths under the root; a directory's index.html is served for its path)."""

    name: str
    root: str
    seeds: tuple[str, ...] = ("/",)


# Checked against bookworm's packages. The roots hold all but a few of each package's
# HTML files (openjdk's jvmti.html beside api/, octave's 28-page liboctave.html beside
# octave.html/); openjdk's top index.html is a meta refresh, so api/ is the root.
PACKAGES = (
    Package("openjdk-17-doc", "/usr/share/doc/openjdk-17-jre-headless/api"),
    Package("python-scipy-doc", "/usr/share/doc/python-scipy-doc/html"),
    Package("libboost1.74-doc", "/usr/share/doc/libboost1.74-doc/doc/html"),
    Package("octave-doc", "/usr/share/doc/octave/octave.html"),
    Package(
        "gnucash-docs",
        "/usr/share/doc/gnucash-docs",
        tuple(
            f"/gnucash-{book}-{language}/"
            for book, languages in (("guide", "de en it ja pt"), ("help", "de en it pt"))
            for language in languages.split()
        ),
    ),
    Package("erlang-doc", "/usr/share/doc/erlang-doc", ("/doc/",)),
    Package("git-doc", "/usr/share/doc/git-doc"),
    Package("sphinx-doc", "/usr/share/doc/sphinx-doc/html"),
)


@dataclass(frozen=True, slots=True)
class Host:
    address: str
    port: int
    package: str
    root: Path
    seeds: tuple[str, ...]

    @property
    def base_url(self) -> str:
        return f"http://{self.address}:{self.port}"

    def seed_urls(self) -> list[str]:
        return [self.base_url + path for path in self.seeds]


def is_html(name: str) -> bool:
    """Whether nginx serves the file as HTML: by its extension, which a name's leading
    dot does not start (nginx serves Boost's `operator/.html` as a binary file)."""
    return name.lower().endswith(HTML_SUFFIXES) and name.rfind(".") > 0


def html_root(files: list[str]) -> tuple[str, tuple[str, ...]]:
    """For a package not in PACKAGES: the deepest directory holding 90% of its HTML
    files, and its seeds (its index.html, else its subdirectories' index.html)."""
    pages = [Path(f) for f in files if is_html(f)]
    if not pages:
        raise SystemExit("the package has no HTML files")
    under: collections.Counter[Path] = collections.Counter()
    for page in pages:
        under.update(page.parents)
    root = max((d for d, n in under.items() if n >= 0.9 * len(pages)), key=lambda d: len(d.parts))
    served = count_html(root)
    if served > 2 * len(pages):  # a directory other packages share, such as /usr/share/doc
        raise SystemExit(
            f"{root} holds 90% of the package's {len(pages)} HTML files but {served} in all:"
            " serving it would serve other packages; serve it with configure --site NAME=ROOT"
        )
    if (root / "index.html").is_file():
        return str(root), ("/",)
    seeds = tuple(f"/{d.name}/" for d in sorted(root.iterdir()) if (d / "index.html").is_file())
    if not seeds:
        raise SystemExit(f"{root}: no index.html there or one level down; give --site")
    return str(root), seeds


def installed_files(package: str) -> list[str]:
    listing = subprocess.run(["dpkg", "-L", package], capture_output=True, text=True, check=True)
    return listing.stdout.splitlines()


def install(packages: list[str]) -> list[Package]:
    """apt-get install nginx and the packages (a no-op for those installed already)."""
    missing = [
        name
        for name in ["nginx", *packages]
        if subprocess.run(
            ["dpkg-query", "-W", "-f=${Status}", name], capture_output=True, text=True
        ).stdout
        != "install ok installed"
    ]
    if missing:
        environment = os.environ | {"DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update", "-qq"], check=True)
        subprocess.run(
            ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *missing],
            check=True,
            env=environment,
        )
    known = {package.name: package for package in PACKAGES}
    chosen = []
    for name in packages:
        if name in known:
            chosen.append(known[name])
        else:
            root, seeds = html_root(installed_files(name))
            chosen.append(Package(name, root, seeds))
    return chosen


def hosts_for(packages: list[Package], port: int, first_address: int) -> list[Host]:
    hosts = []
    for number, package in enumerate(packages):
        root = Path(package.root)
        if not root.is_dir():
            raise SystemExit(f"{package.name}: its HTML root {root} is not a directory")
        hosts.append(
            Host(f"127.0.0.{first_address + number}", port, package.name, root, package.seeds)
        )
    return hosts


def write_config(directory: Path, hosts: list[Host], user: str | None) -> None:
    """hosts.tsv, seeds.txt, robots.txt and nginx.conf under `directory`."""
    (directory / "logs").mkdir(parents=True, exist_ok=True)
    (directory / "tmp").mkdir(exist_ok=True)
    with (directory / "hosts.tsv").open("w") as table:
        table.write("address\tport\tpackage\troot\tseeds\n")
        for host in hosts:
            seeds = ",".join(host.seeds)
            table.write(f"{host.address}\t{host.port}\t{host.package}\t{host.root}\t{seeds}\n")
    seeds = [url for host in hosts for url in host.seed_urls()]
    (directory / "seeds.txt").write_text("\n".join(seeds) + "\n")
    (directory / "robots.txt").write_text("User-agent: *\nAllow: /\n")
    servers = "\n".join(
        f"""    server {{
        listen {host.address}:{host.port};
        server_name {host.address};
        root {host.root};
        access_log {directory}/logs/access.log timed buffer=64k flush=1s;
        location = /robots.txt {{ alias {directory}/robots.txt; }}
    }}"""
        for host in hosts
    )
    temp = directory / "tmp"
    (directory / "nginx.conf").write_text(
        f"""# written by bench/realweb/realweb.py: {len(hosts)} documentation hosts on loopback
{f"user {user};" if user else ""}
worker_processes 1;
# the open file cache's descriptors and the connections' fit below this limit
worker_rlimit_nofile 65536;
pid {directory}/nginx.pid;
error_log {directory}/logs/error.log warn;
events {{ worker_connections 4096; }}
http {{
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    log_format timed '$remote_addr [$time_local] $host "$request" $status $body_bytes_sent '
                     '$request_time';
    sendfile on;
    tcp_nopush on;
    tcp_nodelay on;
    keepalive_timeout 65;
    keepalive_requests 100000;
    autoindex off;
    index index.html;
    absolute_redirect off;
    server_tokens off;
    open_file_cache max=10000 inactive=60s;
    client_body_temp_path {temp}/body;
    proxy_temp_path {temp}/proxy;
    fastcgi_temp_path {temp}/fastcgi;
    uwsgi_temp_path {temp}/uwsgi;
    scgi_temp_path {temp}/scgi;
{servers}
}}
"""
    )


def read_hosts(directory: Path) -> list[Host]:
    """The hosts `install` or `configure` wrote to DIR/hosts.tsv."""
    path = directory / "hosts.tsv"
    if not path.is_file():
        raise SystemExit(f"{path}: missing; run `realweb.py install --dir {directory}` first")
    hosts = []
    for line in path.read_text().splitlines()[1:]:
        address, port, package, root, seeds = line.split("\t")
        hosts.append(Host(address, int(port), package, Path(root), tuple(seeds.split(","))))
    return hosts


def nginx(directory: Path, *arguments: str) -> None:
    binary = shutil.which("nginx") or "/usr/sbin/nginx"
    command = [binary, "-p", str(directory), "-e", str(directory / "logs/error.log")]
    subprocess.run([*command, "-c", str(directory / "nginx.conf"), *arguments], check=True)


def running_pid(directory: Path) -> int | None:
    try:
        pid = int((directory / "nginx.pid").read_text())
        os.kill(pid, 0)
    except (OSError, ValueError):
        return None
    return pid


def start(directory: Path, timeout: float = 10.0) -> None:
    if running_pid(directory) is None:
        nginx(directory)  # the master daemonises and writes DIR/nginx.pid
    deadline = time.monotonic() + timeout
    for host in read_hosts(directory):
        for url in host.seed_urls():
            while True:
                try:
                    with urllib.request.urlopen(url, timeout=1) as answer:
                        answer.read()
                    break
                except (OSError, urllib.error.URLError) as error:
                    if time.monotonic() > deadline:
                        raise SystemExit(f"{url} does not answer: {error}") from None
                    time.sleep(0.1)


def stop(directory: Path, timeout: float = 10.0) -> None:
    pid = running_pid(directory)
    if pid is None:
        return
    nginx(directory, "-s", "quit")
    deadline = time.monotonic() + timeout
    while running_pid(directory) == pid and time.monotonic() < deadline:
        time.sleep(0.1)


def count_html(root: Path) -> int:
    return sum(
        1 for _, _, names in os.walk(root, followlinks=True) for name in names if is_html(name)
    )


def status(directory: Path) -> None:
    pid = running_pid(directory)
    print(f"nginx: {'running, pid ' + str(pid) if pid else 'stopped'} ({directory})")
    for host in read_hosts(directory):
        print(f"{host.base_url}  {host.package:18} {count_html(host.root):6} HTML  {host.root}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ("install", "configure", "start", "stop", "status"):
        command = commands.add_parser(name)
        command.add_argument("--dir", type=Path, default=DEFAULT_DIR, help="state directory")
        if name in ("install", "configure"):
            command.add_argument("--port", type=int, default=DEFAULT_PORT)
            command.add_argument("--first-address", type=int, default=DEFAULT_FIRST_ADDRESS)
            command.add_argument(
                "--user", help="nginx's worker user (default: nobody when run as root)"
            )
    commands.choices["install"].add_argument(
        "--packages", nargs="+", default=[package.name for package in PACKAGES]
    )
    commands.choices["configure"].add_argument(
        "--site", action="append", required=True, help="NAME=ROOT, one a host, served at /"
    )
    args = parser.parse_args()
    directory = args.dir.resolve()
    if args.command in ("install", "configure"):
        if args.command == "install":
            packages = install(args.packages)
        else:
            packages = [Package(*site.split("=", 1)) for site in args.site]
        user = args.user or ("nobody nogroup" if os.geteuid() == 0 else None)
        hosts = hosts_for(packages, args.port, args.first_address)
        restart = running_pid(directory) is not None
        write_config(directory, hosts, user)
        if restart:
            nginx(directory, "-s", "reload")
        status(directory)
        print(f"seeds: {directory / 'seeds.txt'}")
    elif args.command == "start":
        start(directory)
        status(directory)
    elif args.command == "stop":
        stop(directory)
    else:
        status(directory)


if __name__ == "__main__":
    sys.exit(main())
