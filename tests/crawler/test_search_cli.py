"""`crawler search`: the collection searched from the command line, also mid-crawl."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from crawler.cli import main
from crawler.cli.search import find
from testbed.server import ServerSpec, Testbed
from testbed.web import WebSpec
from tests.crawler.helpers import crawl, crawled_site, html, stored

PAGES = {
    "/": html(
        "<html><head><title>Solar panels</title></head><body><p>Solar panels turn sunlight "
        'into electricity.</p><a href="/wind">wind</a><a href="/cake">cake</a></body></html>'
    ),
    "/wind": html(
        "<html><head><title>Wind</title></head><body><p>Turbines make electricity from "
        "wind, solar panels from sunlight.</p></body></html>"
    ),
    "/cake": html("<html><head><title>Cake</title></head><body><p>Flour and sugar.</p></body>"),
}


@pytest.fixture
async def crawled(tmp_path: Path) -> str:
    return await crawled_site(tmp_path / "crawl.db", PAGES, topic="solar panels sunlight")


def test_search_prints_rank_title_url_relevance_and_a_marked_snippet(
    crawled: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["search", "sunlight electricity", "--db", crawled]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("1. Solar panels")
    assert "http://127.0.0.1:" in lines[1]
    assert "relevance 0." in lines[1]
    assert "[sunlight]" in out
    assert "[electricity]" in out
    assert "2. Wind" in out
    assert "Cake" not in out


def test_search_as_json_and_its_filters(crawled: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "solar", "--db", crawled, "--json", "--limit", "1"]) == 0
    (hit,) = json.loads(capsys.readouterr().out)
    assert {"url", "title", "relevance", "score", "snippet"} <= hit.keys()
    assert hit["title"] == "Solar panels"
    assert "[Solar]" in hit["snippet"]
    assert main(["search", "solar", "--db", crawled, "--json", "--min-relevance", "1.01"]) == 0
    assert json.loads(capsys.readouterr().out) == []
    assert main(["search", "solar", "--db", crawled, "--json", "--host", "elsewhere"]) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_search_says_what_is_wrong_with_its_input(
    crawled: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["search", '" * -', "--db", crawled])
    assert exited.value.code == 2
    assert "no words to search for" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exited:
        main(["search", "solar", "--db", crawled, "--limit", "0"])
    assert exited.value.code == 2
    assert "limit" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exited:
        main(["search", "solar", "--db", str(tmp_path / "missing.db")])
    assert exited.value.code == 1
    assert "no crawl database" in capsys.readouterr().err


async def test_search_answers_from_another_connection_while_a_crawl_writes(
    tmp_path: Path,
) -> None:
    db = str(tmp_path / "crawl.db")
    # answers of 20 ms: the crawl takes seconds, so that searches land while it writes
    async with Testbed(WebSpec(pages=600, hosts=2, seed=3), ServerSpec(latency=0.02)) as bed:
        crawling = asyncio.create_task(
            crawl(db, bed.seeds, allowed_domains=tuple(bed.hostnames), max_pages=400)
        )
        counts: list[int] = []
        while not crawling.done() and len(counts) < 200:
            if stored(tmp_path / "crawl.db") > 0:  # the crawl has made its tables
                counts.append(len(await find(db, "solar", limit=1000)))
            await asyncio.sleep(0.02)
        summary = await crawling
    after = len(await find(db, "solar", limit=1000))
    assert summary.fetched > 300
    assert counts  # searched while the crawl ran
    assert counts == sorted(counts)
    assert counts[0] < counts[-1] or counts[-1] < after  # it read while pages came in
