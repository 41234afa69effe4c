"""A PostgreSQL password kept off the command line, where every local user reads it
(/proc/PID/cmdline): a database URL there that carries one is warned of; the password
file and PGPASSWORD give it instead, as libpq's clients take it."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from sqlalchemy import text

from crawler.cli import main
from storage import open_engine
from tests.postgres import running_server

SECRET = "s3cret"
WITH_PASSWORD = f"postgresql+asyncpg://crawler:{SECRET}@127.0.0.1:1/crawl"
WITHOUT_PASSWORD = "postgresql+asyncpg://crawler@127.0.0.1:1/crawl"
# a seed refused before the database is opened: the command stops at once
REFUSED_RUN = ["run", "--seed", "ftp://a.example/", "--topic", "solar energy"]


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


@pytest.mark.parametrize(
    "argv",
    [[*REFUSED_RUN, "--db", WITH_PASSWORD], ["status", "--db", WITH_PASSWORD]],
    ids=["run", "status"],
)
def test_a_password_in_a_database_url_on_the_command_line_is_warned_of_once(
    argv: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING), pytest.raises(SystemExit):
        main(argv)
    (warning,) = warnings_of(caplog)
    assert "command line" in warning
    assert "PGPASSWORD" in warning
    assert SECRET not in warning


def test_a_password_elsewhere_is_not_warned_of(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    settings = tmp_path / "crawl.toml"
    settings.write_text(f'db = "{WITH_PASSWORD}"\n')
    with caplog.at_level(logging.WARNING):
        with pytest.raises(SystemExit):
            main([*REFUSED_RUN, "--db", WITHOUT_PASSWORD])
        with pytest.raises(SystemExit):
            main([*REFUSED_RUN, "--config", str(settings)])
        monkeypatch.setenv("CRAWLER_DB", WITH_PASSWORD)
        with pytest.raises(SystemExit):
            main(REFUSED_RUN)
    assert warnings_of(caplog) == []


async def test_a_url_without_password_takes_it_from_the_password_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    password_file = tmp_path / "pgpass"
    monkeypatch.setenv("PGPASSFILE", str(password_file))
    monkeypatch.delenv("PGPASSWORD", raising=False)
    with running_server(password=SECRET) as server:
        # a Unix socket's connection matches the file's host `localhost`, as in libpq
        password_file.write_text(f"localhost:{server.port}:*:postgres:{SECRET}\n")
        password_file.chmod(0o600)  # the driver ignores a file others can read
        engine = open_engine(server.url("postgres"))
        try:
            async with engine.connect() as connection:
                assert (await connection.execute(text("SELECT 1"))).scalar() == 1
        finally:
            await engine.dispose()
