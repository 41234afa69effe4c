"""Names looked up by the crawler's resolver and by aiohttp's threaded one, from one DNS
server on loopback.

    python -m bench many-hosts names [--dir /tmp/manyhosts] [--runs 3] [--at-once 64]

The crawler's `CachingResolver` asks c-ares on the event loop; aiohttp's
`ThreadedResolver` calls the system's getaddrinfo in the loop's thread pool. Both ask a
dnsmasq that this starts on 127.0.0.53:53 with the many-hosts web's names (set up with
--names): the system's resolver asks port 53 only, and the threaded lookups run in a
mount namespace of their own whose /etc/resolv.conf names that server (unshare, as
root). Each run looks up every host's name once, A records, `--at-once` at a time, in a
fresh process; the kinds interleave. Reported: lookups a second and CPU a lookup.
"""

from __future__ import annotations

import asyncio
import getpass
import json
import os
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from aiohttp import ThreadedResolver

SERVER = "127.0.0.53"  # port 53: the only one getaddrinfo asks
KINDS = ("c-ares", "threaded")


async def look_up(kind: str, names: list[str], at_once: int) -> None:
    from crawler.net.resolver import CachingResolver

    resolver = CachingResolver(nameservers=[SERVER]) if kind == "c-ares" else ThreadedResolver()
    slots = asyncio.Semaphore(at_once)

    async def one(name: str) -> None:
        async with slots:
            await resolver.resolve(name, 80, family=socket.AF_INET)

    await asyncio.gather(*(one(name) for name in names))
    await resolver.close()


def child(kind: str, names_file: Path, at_once: int) -> None:
    """One run, in this process: every name once; prints its seconds and CPU seconds."""
    names = names_file.read_text().split()
    cpu_before, started = cpu_seconds(), time.perf_counter()
    asyncio.run(look_up(kind, names, at_once))
    seconds, cpu = time.perf_counter() - started, cpu_seconds() - cpu_before
    print(json.dumps({"seconds": seconds, "cpu": cpu}))


def cpu_seconds() -> float:
    """This process's, its threads' included."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def one_run(kind: str, names_file: Path, at_once: int, scratch: Path) -> dict[str, float]:
    python = [sys.executable, __file__, "child", kind, str(names_file), str(at_once)]
    if kind == "threaded":
        conf = scratch / "resolv.conf"
        conf.write_text(f"nameserver {SERVER}\n")
        mount = f"mount --bind {conf} /etc/resolv.conf && exec {' '.join(python)}"
        command = ["unshare", "--mount", "sh", "-c", mount]
    else:
        command = python
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.splitlines()[-1])


def compare(directory: Path, runs: int, at_once: int) -> None:
    from manyhosts import name, read_web  # the many-hosts web's names

    web = read_web(directory)
    if web["dns_port"] is None:
        raise SystemExit(f"the web in {directory} has no names: set it up with --names")
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        raise SystemExit("needs root and unshare, to point getaddrinfo at a server on loopback")
    with tempfile.TemporaryDirectory() as scratch_name:
        scratch = Path(scratch_name)
        names_file = scratch / "names.txt"
        names_file.write_text("\n".join(name(n) for n in range(1, web["hosts"] + 1)))
        server = start_server(directory, scratch)
        try:
            rows: dict[str, list[dict[str, float]]] = {kind: [] for kind in KINDS}
            for number in range(runs):
                for kind in KINDS[number % 2 :] + KINDS[: number % 2]:
                    rows[kind].append(one_run(kind, names_file, at_once, scratch))
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait()
    count = web["hosts"]
    print(f"{count:,} names, {at_once} at once, medians of {runs} runs")
    for kind, results in rows.items():
        rate = statistics.median(count / r["seconds"] for r in results)
        cpu = statistics.median(1e6 * r["cpu"] / count for r in results)
        print(f"{kind:9} {rate:10,.0f} lookups/s {cpu:8,.0f} us of CPU a lookup")


def start_server(directory: Path, scratch: Path) -> subprocess.Popen[bytes]:
    binary = shutil.which("dnsmasq") or "/usr/sbin/dnsmasq"
    server = subprocess.Popen(
        [
            *(binary, "--keep-in-foreground", "--conf-file=/dev/null", "--no-resolv"),
            *("--no-hosts", "--local=/manyhosts.test/", f"--listen-address={SERVER}"),
            *("--port=53", "--bind-interfaces", f"--addn-hosts={directory / 'names.hosts'}"),
            *("--local-ttl=300", f"--pid-file={scratch / 'dnsmasq.pid'}"),
            f"--user={getpass.getuser()}",
        ]
    )
    deadline = time.monotonic() + 10
    while True:
        try:
            with socket.create_connection((SERVER, 53), timeout=0.2):
                return server
        except OSError:
            if time.monotonic() > deadline:
                server.kill()
                raise SystemExit(f"dnsmasq did not start on {SERVER}:53") from None
            time.sleep(0.1)


if __name__ == "__main__":  # a run's process: `python -m bench many-hosts names` starts it
    child(sys.argv[2], Path(sys.argv[3]), int(sys.argv[4]))
