"""`crawler demo`: its database stays where it says, and it tells what to run next."""

from __future__ import annotations

import asyncio
import contextlib
import io
from pathlib import Path

import pytest

from crawler.cli import main
from testbed.demo import DEMO_DB, run_demo


async def _demo(db: str | None) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert await run_demo(duration=1.0, db=db, pages=400) == 0
    return out.getvalue()


async def test_the_demo_keeps_its_database_here_and_prints_the_next_commands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    text = await _demo(None)
    assert (tmp_path / DEMO_DB).is_file()
    for command in ("status", "export", "report"):
        assert f"crawler {command} --db {DEMO_DB}" in text
    # each of the two "relevant" counts says what it counts by
    assert "relevant by the crawler's score" in text
    assert "relevant by the testbed's ground truth" in text
    status = io.StringIO()
    with contextlib.redirect_stdout(status):
        assert await asyncio.to_thread(main, ["status", "--db", DEMO_DB]) == 0
    assert "pages fetched" in status.getvalue()
    # the search it suggests finds pages; the web page was served while it ran
    assert '  crawler search "solar energy" --db ' in text
    hits = io.StringIO()
    with contextlib.redirect_stdout(hits):
        assert await asyncio.to_thread(main, ["search", "solar energy", "--db", DEMO_DB]) == 0
    assert hits.getvalue().startswith("1. ")
    assert "web page: http://127.0.0.1:" in text
    # a second demo starts its database afresh
    await _demo(None)


async def test_the_demo_keeps_its_database_where_db_says(tmp_path: Path) -> None:
    target = tmp_path / "mine.db"
    text = await _demo(str(target))
    assert target.is_file()
    assert f"crawler status --db {target}" in text


async def test_the_demo_leaves_a_database_of_another_crawl_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "other.db"
    other.write_bytes(b"not a demo's")
    with pytest.raises(SystemExit) as exit_info:
        await asyncio.to_thread(main, ["demo", "--duration", "1", "--db", str(other)])
    assert exit_info.value.code != 0
    assert "not a demo's database" in capsys.readouterr().err
    assert other.read_bytes() == b"not a demo's"
