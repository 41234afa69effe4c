"""The report's first section, what the crawl found: its best pages, linked, and the
hosts with the most relevant pages."""

from __future__ import annotations

import html
from collections import Counter
from urllib.parse import urlsplit

import numpy as np

from crawler.reporting.history import CrawlHistory

TOP_HOSTS = 20
BEST_PAGES = 25


def best_pages(
    history: CrawlHistory, limit: int = BEST_PAGES
) -> list[tuple[str | None, str, float]]:
    """(title, URL, relevance) of the most relevant pages, best first."""
    latest: dict[str, tuple[str | None, float]] = {}  # a page fetched again: its last visit
    titles = history.titles or [None] * len(history.urls)
    for url, title, relevance in zip(history.urls, titles, history.relevance, strict=True):
        if not np.isnan(relevance):
            latest[url] = (title, float(relevance))
    ranked = sorted(latest.items(), key=lambda item: (-item[1][1], item[0]))[:limit]
    return [(title, url, relevance) for url, (title, relevance) in ranked]


def relevant_by_host(history: CrawlHistory, limit: int = TOP_HOSTS) -> list[tuple[str, int, int]]:
    """(host, relevant pages, pages) of the hosts with the most relevant pages."""
    relevant: Counter[str] = Counter()
    pages: Counter[str] = Counter()
    for url, relevance in zip(history.urls, history.relevance, strict=True):
        host = urlsplit(url).netloc
        pages[host] += 1
        relevant[host] += bool(relevance >= history.relevance_threshold)
    ranked = sorted(pages, key=lambda host: (-relevant[host], -pages[host], host))[:limit]
    return [(host, relevant[host], pages[host]) for host in ranked]


def found_html(history: CrawlHistory) -> list[str]:
    """The report's first section: the best pages, linked, and relevant pages by host."""
    parts = [
        "<h2>What the crawl found</h2>",
        f"<h3>Best pages</h3><p>The {BEST_PAGES} most relevant pages stored.</p><table>",
        "<tr><th></th><th>page</th><th>relevance</th></tr>",
    ]
    for rank, (title, url, relevance) in enumerate(best_pages(history), start=1):
        parts.append(
            f"<tr><td>{rank}</td><td><a href='{html.escape(url)}'>"
            f"{html.escape(title or url)}</a></td><td>{relevance:.3f}</td></tr>"
        )
    parts += [
        "</table><h3>Relevant pages by host</h3>",
        f"<p>Pages scored at least {history.relevance_threshold:.3f}, of the pages stored.</p>",
        "<table><tr><th>host</th><th>relevant</th><th>pages</th></tr>",
        *(
            f"<tr><td>{html.escape(host)}</td><td>{relevant}</td><td>{pages}</td></tr>"
            for host, relevant, pages in relevant_by_host(history)
        ),
        "</table>",
    ]
    return parts
