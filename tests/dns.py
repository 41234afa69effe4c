"""A DNS server on loopback for the tests: Debian's dnsmasq, answering the names it is
given in a domain of its own and nothing else (a name of the domain it does not hold is
NXDOMAIN), logging every query, so a test counts lookups where they arrive.

    with dns_server({"a.crawl.test": "127.0.0.1"}, ttl=30) as dns:
        crawl(..., dns_servers=(dns.address,))
        assert dns.queries("a.crawl.test") == 1

Skipped, saying what to install, where dnsmasq is missing (`apt-get install
dnsmasq-base`), except under CI (CRAWLER_REQUIRE_DEPLOY_TOOLS), where it must be there.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

DOMAIN = "crawl.test"


@dataclass
class DnsServer:
    port: int
    log: Path

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def queries(self, name: str) -> int:
        """Queries that reached the server for `name`, of any type."""
        lines = self.log.read_text().splitlines() if self.log.exists() else []
        return sum(1 for line in lines if "query[" in line and f" {name} from " in line)


def _binary() -> str:
    binary = shutil.which("dnsmasq") or (
        "/usr/sbin/dnsmasq" if Path("/usr/sbin/dnsmasq").exists() else None
    )
    if binary is None:
        if os.environ.get("CRAWLER_REQUIRE_DEPLOY_TOOLS"):
            raise RuntimeError("dnsmasq is missing: apt-get install dnsmasq-base")
        pytest.skip("dnsmasq is not installed (apt-get install dnsmasq-base)")
    return binary


def _free_port() -> int:
    """A port free for UDP and TCP on 127.0.0.1 (dnsmasq listens on both)."""
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
            udp.bind(("127.0.0.1", 0))
            port = int(udp.getsockname()[1])
            with socket.socket() as tcp:
                try:
                    tcp.bind(("127.0.0.1", port))
                except OSError:
                    continue
                return port


@contextmanager
def dns_server(names: dict[str, str], *, ttl: int = 300) -> Iterator[DnsServer]:
    """dnsmasq on 127.0.0.1, answering `names` (name -> IPv4 address) with `ttl`."""
    binary = _binary()
    with tempfile.TemporaryDirectory() as scratch:
        directory = Path(scratch)
        hosts = directory / "names.hosts"
        hosts.write_text("".join(f"{address} {name}\n" for name, address in names.items()))
        log = directory / "queries.log"
        port = _free_port()
        process = subprocess.Popen(
            [
                binary,
                "--keep-in-foreground",
                "--conf-file=/dev/null",
                "--no-resolv",
                "--no-hosts",
                f"--local=/{DOMAIN}/",
                f"--addn-hosts={hosts}",
                f"--local-ttl={ttl}",
                f"--port={port}",
                "--listen-address=127.0.0.1",
                "--bind-interfaces",
                "--log-queries",
                f"--log-facility={log}",
                f"--pid-file={directory / 'dnsmasq.pid'}",
                f"--user={os.environ.get('USER') or 'root'}",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            server = DnsServer(port, log)
            deadline = time.monotonic() + 10
            while "started" not in (log.read_text() if log.exists() else ""):
                if process.poll() is not None:
                    raise RuntimeError(f"dnsmasq stopped: {process.stderr.read()!r}")  # type: ignore[union-attr]
                if time.monotonic() > deadline:
                    raise RuntimeError("dnsmasq did not start in 10 s")
                time.sleep(0.02)
            yield server
        finally:
            process.terminate()
            process.wait(timeout=10)
            if process.stderr is not None:
                process.stderr.close()
