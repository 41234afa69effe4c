"""`crawler export`: the pages' main text, Parquet, and relevance to four decimals."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from crawler.cli import main
from crawler.errors import MissingExtra
from crawler.reporting.collection import export, export_file
from tests.crawler.helpers import crawled_site, html

BODY = "Solar panels turn sunlight into electricity on the roof of the house."
PAGES = {
    "/": html(
        "<html><head><title>Solar</title></head><body><nav><a href='/b'>Menu</a></nav>"
        f"<p>{BODY}</p><a href='/b'>more about solar</a></body></html>"
    ),
    "/b": html("<html><head><title>B</title></head><body><p>Sunlight and panels.</p></body>"),
}


@pytest.fixture
async def crawled(tmp_path: Path) -> str:
    return await crawled_site(tmp_path / "crawl.db", PAGES, topic="solar panels sunlight")


async def test_export_with_text_adds_each_pages_text(crawled: str) -> None:
    plain, with_text = io.StringIO(), io.StringIO()
    await export(crawled, plain)
    await export(crawled, with_text, text=True)
    rows = [json.loads(line) for line in with_text.getvalue().splitlines()]
    assert all("text" not in json.loads(line) for line in plain.getvalue().splitlines())
    assert BODY in rows[0]["text"]
    assert "Menu" not in rows[0]["text"]  # the main text: no navigation
    assert rows[1]["text"] == "Sunlight and panels."


async def test_export_gives_relevance_to_four_decimals(crawled: str) -> None:
    out = io.StringIO()
    await export(crawled, out, fmt="csv")
    relevances = [line.split(",")[5] for line in out.getvalue().splitlines()[1:]]
    assert relevances
    assert all(len(value.partition(".")[2]) <= 4 for value in relevances)
    assert any(0 < float(value) < 1 for value in relevances)


async def test_export_as_parquet_with_text(crawled: str, tmp_path: Path) -> None:
    parquet = pytest.importorskip("pyarrow.parquet")
    target = tmp_path / "pages.parquet"
    count = await export_file(crawled, target, fmt="parquet", text=True)
    table = parquet.read_table(target)
    assert count == table.num_rows == 2
    rows = table.to_pylist()
    assert rows[0]["title"] == "Solar"
    assert BODY in rows[0]["text"]
    assert rows[0]["fetched_at"].tzinfo is not None
    assert rows[0]["relevance"] == round(rows[0]["relevance"], 4)


async def test_parquet_without_pyarrow_is_an_error_naming_the_extra(
    crawled: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # as where it is not installed
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    target = tmp_path / "pages.parquet"
    with pytest.raises(MissingExtra, match=r"topical-crawler\[parquet\]"):
        await export_file(crawled, target, fmt="parquet")
    assert not target.exists()


def test_the_export_command_takes_text_and_parquet(
    crawled: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["export", "--db", crawled, "--text"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert BODY in rows[0]["text"]
    with pytest.raises(SystemExit) as exited:  # Parquet is a file's format
        main(["export", "--db", crawled, "--format", "parquet"])
    assert exited.value.code == 2
    assert "--out" in capsys.readouterr().err
    pytest.importorskip("pyarrow")
    target = tmp_path / "pages.parquet"
    assert main(["export", "--db", crawled, "--format", "parquet", "--out", str(target)]) == 0
    assert target.read_bytes().startswith(b"PAR1")
