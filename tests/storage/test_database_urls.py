"""Database URLs as people type them: SQLAlchemy's, a bare path, PostgreSQL's short forms."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

import storage
from crawler.cli import main
from crawler.config import defaults
from testbed.server import Testbed
from testbed.web import WebSpec
from tests.crawler.helpers import crawl


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("crawl.db", "sqlite+aiosqlite:///crawl.db"),
        ("/var/lib/crawl.db", "sqlite+aiosqlite:////var/lib/crawl.db"),
        ("sqlite:///x.db", "sqlite+aiosqlite:///x.db"),
        ("sqlite+aiosqlite:///x.db", "sqlite+aiosqlite:///x.db"),
        ("sqlite:///:memory:", "sqlite+aiosqlite:///:memory:"),
        ("postgresql://crawler@db/crawl", "postgresql+asyncpg://crawler@db/crawl"),
        ("postgres://crawler@db:5433/crawl", "postgresql+asyncpg://crawler@db:5433/crawl"),
        ("postgresql+asyncpg://crawler@db/crawl", "postgresql+asyncpg://crawler@db/crawl"),
    ],
)
def test_each_accepted_form_maps_to_its_async_driver(typed: str, meant: str) -> None:
    assert storage.database_url(typed) == make_url(meant)


@pytest.mark.parametrize(
    "typed", ["mysql://root@db/crawl", "postgresql+psycopg2://db/crawl", "sqlite+pysqlite:///x", ""]
)
def test_any_other_form_is_an_error_listing_the_accepted_ones(typed: str) -> None:
    with pytest.raises(ValueError, match=r"sqlite:///PATH.*a bare path.*postgresql://"):
        storage.database_url(typed)


def test_a_bad_url_is_one_line_naming_the_accepted_forms(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for command in (["status"], ["export"], ["report", "--out", str(tmp_path / "r.html")]):
        with pytest.raises(SystemExit) as exit_info:
            main([*command, "--db", "mysql://root@db/crawl"])
        assert exit_info.value.code != 0
        err = capsys.readouterr().err
        assert err.count("\n") == 1, err
        assert "Traceback" not in err
        assert "sqlite:///PATH" in err
        assert "postgresql://" in err


async def test_sqlalchemy_urls_and_bare_paths_read_a_crawl(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    async with Testbed(WebSpec(pages=100, hosts=1, seed=2)) as bed:
        await crawl(
            f"sqlite:///{tmp_path / 'crawl.db'}",
            bed.seeds,
            allowed_domains=tuple(bed.hostnames),
            max_pages=10,
        )
    monkeypatch.chdir(tmp_path)
    reports = []
    for db in (["--db", "crawl.db"], ["--db", "sqlite:///crawl.db"], []):  # [] is the default
        capsys.readouterr()
        assert await _main(["status", "--json", *db]) == 0
        reports.append(json.loads(capsys.readouterr().out))
    assert reports[0]["pages"] > 0
    assert reports[0] == reports[1] == reports[2]


async def _main(argv: list[str]) -> int:
    """The command on a thread of its own, since it runs its own event loop."""
    import asyncio

    return await asyncio.to_thread(main, argv)


def test_every_command_reading_a_crawl_has_the_run_default() -> None:
    from crawler.cli import build_parser

    parser = build_parser()
    for command in ("run", "status", "export", "report"):
        argv = [command] + (["--out", "r.html"] if command == "report" else [])
        assert parser.parse_args(argv).db in (defaults.DB, None), command
    for command in ("status", "export", "report"):
        argv = [command] + (["--out", "r.html"] if command == "report" else [])
        assert parser.parse_args(argv).db == defaults.DB, command
