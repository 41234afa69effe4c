"""With worker processes, a page too small to be worth handing over is analysed on the
event loop: a crawl of a loopback site of small and large pages, each page counted where
it was analysed, and every score the one a single processor gives the pages in the order
they were scored."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from prometheus_client import CollectorRegistry
from yarl import URL

from crawler.config import defaults
from crawler.fetch.fetcher import Response
from crawler.fetch.visit import Visit
from crawler.net.scope import Scope
from crawler.outcomes import Outcome
from crawler.process.processor import Processor
from policies import Candidate, TopicScorer
from tests.crawler.helpers import SEEN, collection, crawl, html, serving, site

INLINE_BELOW = 4096
PAGES = 24
TOPIC = "solar energy panels"
ON_TOPIC = "solar energy panels on the roof store power in batteries"
OFF_TOPIC = "pasta recipes with tomatoes basil and olive oil for dinner"


def body(page: int) -> str:
    """Odd pages large, even ones small; each mixes the topic's words with others in its
    own proportion, so that the pages score apart."""
    sentences = [ON_TOPIC if (page + n) % 5 < page % 4 + 1 else OFF_TOPIC for n in range(8)]
    text = " ".join(sentences) * (30 if page % 2 else 1)
    hrefs = {0, (page + 1) % PAGES, (page + 7) % PAGES, *(range(PAGES) if page == 0 else ())}
    anchors = "".join(f'<a href="/p{n}">page {n}</a>' for n in sorted(hrefs))
    head = f"<head><title>page {page}</title></head>"
    return f"<html>{head}<body><p>{text}</p>{anchors}</body></html>"


async def test_small_pages_are_analysed_on_the_event_loop_and_score_as_with_one_processor(
    tmp_path: Path,
) -> None:
    pages = {f"/p{n}": body(n) for n in range(PAGES)}
    small = {path for path, text in pages.items() if len(text.encode()) < INLINE_BELOW}
    assert 0 < len(small) < PAGES
    app = site({path: html(text) for path, text in pages.items()})
    registry = CollectorRegistry()
    db_url = f"sqlite+aiosqlite:///{tmp_path / 'crawl.db'}"
    async with serving(app) as url:
        await crawl(
            db_url,
            [f"{url}p0"],
            topic=TOPIC,
            processors=2,
            inline_below=INLINE_BELOW,
            concurrency=1,  # pages reach the processor in the order they were fetched
            registry=registry,
        )
    asked = Counter(path for path in app[SEEN].paths() if path != "/robots.txt")
    assert asked == Counter(list(pages))  # every page once

    def analysed(where: str) -> float | None:
        return registry.get_sample_value("crawler_pages_analysed_total", {"where": where})

    assert analysed("event_loop") == len(small)
    assert analysed("workers") == PAGES - len(small)

    records = sorted((await collection(db_url)).values(), key=lambda r: r.fetched_at or 0)
    alone = Processor(
        scorer=TopicScorer().fit([TOPIC]),
        scope=Scope.of({"127.0.0.1"}, None),
        store_text=False,
        relevance_threshold=defaults.RELEVANCE_THRESHOLD,
    )
    scores = {}
    for record in records:
        text = pages[URL(record.url).path].encode()
        response = Response(
            URL(record.url), 200, "text/html", "utf-8", None, None, None, text, False, len(text)
        )
        candidate = Candidate(1, record.url, "127.0.0.1", record.depth, 0.5)
        visit = Visit(candidate, Outcome.OK, record.url, response, fetched_at=record.fetched_at)
        scores[record.url] = alone.process(visit).relevance
    assert {r.url: r.relevance for r in records} == scores
    assert len(set(scores.values())) > PAGES // 2  # pages that score apart
