"""A real PostgreSQL server for the tests: Debian's binaries, a cluster made in a temporary
directory, reached on a unix socket only; a fresh database per test.

Where the server cannot be started the tests that need it are skipped with what to
install, except where CRAWLER_REQUIRE_DEPLOY_TOOLS is set (as `.ci/run` sets it). initdb
refuses to run as root: as root, the server runs as the `postgres` system user that
Debian's package creates. A server made with a password asks it of every connection
(scram-sha-256), as the official image's server does of connections from other hosts.
`bench/cluster.py` starts its server here too, without pytest: it passes its own
`unavailable`.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

INSTALL_HINT = "apt-get install postgresql; pip install asyncpg"
SYSTEM_USER = "postgres"


@dataclass(frozen=True)
class PostgresServer:
    socket_dir: Path
    port: int
    _names: Iterator[int]
    password: str | None = None  # the `postgres` user's, if the server asks for one
    data_dir: Path | None = None
    as_user: tuple[str, ...] = ()  # the command prefix that runs pg_ctl as the server's user

    def stop(self) -> None:
        """Stop the server as a restart does: every session is ended, new ones refused.
        `start` brings it back."""
        self._pg_ctl("-m", "fast", "stop")

    def start(self) -> None:
        """Start the server again after `stop`, on the same socket and port."""
        assert self.data_dir is not None
        log = self.data_dir.parent / "server.log"
        self._pg_ctl("-l", str(log), "-o", _options(self.port, self.socket_dir), "-w", "start")

    def _pg_ctl(self, *arguments: str) -> None:
        assert self.data_dir is not None
        command = [*self.as_user, _binary("pg_ctl"), "-D", str(self.data_dir), *arguments]
        subprocess.run(command, capture_output=True, timeout=60, check=True)

    def url(self, database: str) -> str:
        return f"postgresql+asyncpg://postgres@/{database}?host={self.socket_dir}&port={self.port}"

    def client(self, program: str, *arguments: str) -> list[str]:
        """The command line of one of the server's client programs (psql, pgbench)
        connecting to it."""
        socket_options = ["-h", str(self.socket_dir), "-p", str(self.port), "-U", "postgres"]
        return [_binary(program), *socket_options, *arguments]

    def psql(self, sql: str, database: str = "postgres") -> str:
        result = subprocess.run(
            self.client("psql", "-d", database, "-v", "ON_ERROR_STOP=1", "-Atc", sql),
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
            env=None if self.password is None else {**os.environ, "PGPASSWORD": self.password},
        )
        return result.stdout

    def new_database(self) -> str:
        """A fresh empty database; its URL."""
        name = f"crawl_{os.getpid()}_{next(self._names)}"
        self.psql(f"CREATE DATABASE {name}")
        return self.url(name)


def unavailable(reason: str) -> NoReturn:
    import pytest  # here: the benchmark imports this module without pytest

    message = f"PostgreSQL tests need a server: {reason} ({INSTALL_HINT})"
    if os.environ.get("CRAWLER_REQUIRE_DEPLOY_TOOLS"):
        pytest.fail(message + "; CRAWLER_REQUIRE_DEPLOY_TOOLS is set")
    pytest.skip(message)


def _bin_dir() -> Path | None:
    if found := shutil.which("pg_ctl"):
        return Path(found).parent
    candidates = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"), reverse=True)
    return candidates[0].parent if candidates else None


def _binary(name: str) -> str:
    directory = _bin_dir()
    assert directory is not None
    path = directory / name
    return str(path) if path.exists() else (shutil.which(name) or name)


def _options(port: int, sockets: Path) -> str:
    return (
        f"-p {port} -k {sockets} -c listen_addresses='' -c fsync=off "
        "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
    )


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def running_server(
    password: str | None = None,
    unavailable: Callable[[str], NoReturn] = unavailable,
) -> Iterator[PostgresServer]:
    try:
        import asyncpg  # noqa: F401
    except ImportError:
        unavailable("asyncpg is not installed")
    bin_dir = _bin_dir()
    if bin_dir is None:
        unavailable("pg_ctl and initdb are not installed")
    assert bin_dir is not None
    as_user: list[str] = []
    owner = None
    if os.geteuid() == 0:
        try:
            owner = pwd.getpwnam(SYSTEM_USER)
        except KeyError:
            unavailable(f"running as root and there is no {SYSTEM_USER!r} user to run it as")
        assert owner is not None
        as_user = ["runuser", "-u", SYSTEM_USER, "--"]
    root = Path(tempfile.mkdtemp(prefix="crawler-pg-"))
    data, sockets = root / "data", root / "sockets"
    sockets.mkdir()
    if owner is not None:
        for path in (root, sockets):
            os.chown(path, owner.pw_uid, owner.pw_gid)
    port = _free_port()
    log = root / "server.log"

    def run(*argv: str) -> None:
        result = subprocess.run([*as_user, *argv], capture_output=True, text=True, timeout=120)
        if result.returncode != 0:
            unavailable(f"{argv[0]} failed: {result.stderr.strip() or result.stdout.strip()}")

    auth = ["--auth=trust"]
    if password is not None:
        password_file = root / "password"
        password_file.write_text(password + "\n")
        if owner is not None:
            os.chown(password_file, owner.pw_uid, owner.pw_gid)
        auth = ["--auth=scram-sha-256", f"--pwfile={password_file}"]
    try:
        run(
            str(bin_dir / "initdb"),
            "-D",
            str(data),
            "-U",
            "postgres",
            *auth,
            "--no-sync",
            "-E",
            "UTF8",
        )
        options = _options(port, sockets)
        run(str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(log), "-o", options, "-w", "start")
        try:
            yield PostgresServer(sockets, port, itertools.count(), password, data, tuple(as_user))
        finally:
            subprocess.run(
                [*as_user, str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
                capture_output=True,
                timeout=60,
                check=False,
            )
    finally:
        shutil.rmtree(root, ignore_errors=True)
