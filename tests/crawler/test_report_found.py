"""`crawler report`: what the crawl found comes first: the best pages, relevant pages by
host, and harvest over time, before the controllers' sections."""

from __future__ import annotations

import html
from pathlib import Path

from crawler.reporting.history import read_history
from crawler.reporting.report import write_report
from tests.crawler.helpers import crawl, serving, site
from tests.crawler.helpers import html as page

PAGES = {
    "/": page(
        "<html><head><title>Solar panels & sunlight</title></head><body><p>Solar panels "
        "turn sunlight into electricity: solar energy.</p>"
        '<a href="/cells">cells</a><a href="/cake">cake</a></body></html>'
    ),
    "/cells": page(
        "<html><head><title>Solar cells</title></head><body><p>Solar cells and solar "
        "panels.</p></body></html>"
    ),
    "/cake": page("<html><head><title>Cake</title></head><body><p>Flour, sugar.</p></body>"),
}


async def test_the_report_opens_with_the_best_pages_linked_and_relevant_pages_by_host(
    tmp_path: Path,
) -> None:
    db = str(tmp_path / "crawl.db")
    async with serving(site(PAGES)) as base:
        await crawl(db, [base], topic="solar panels energy")
    history = await read_history(db)
    out = tmp_path / "report.html"
    write_report(history, out)
    text = out.read_text(encoding="utf-8")
    found = text.index("What the crawl found")
    assert found < text.index("<h2>harvest</h2>") < text.index("<h2>controllers</h2>")
    best = text.index("Best pages")
    escaped = html.escape("Solar panels & sunlight")
    link = f"<a href='{base}'>{escaped}</a>"
    assert best < text.index(link) < text.index("<a href='" + base + "cells'>Solar cells</a>")
    assert text.index("Cake") > text.index("Solar cells")  # by relevance, best first
    by_host = text.index("Relevant pages by host")
    host = base.split("//")[1].rstrip("/")
    row = text[by_host:].split(f"<td>{host}</td>", 1)[1].split("</tr>", 1)[0]
    assert "<td>3</td>" in row  # pages stored from the host
