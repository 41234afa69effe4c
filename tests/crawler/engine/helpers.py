"""Pages, queued URLs and readings for the tests of the engine's parts."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy.ext.asyncio import AsyncEngine
from yarl import URL

import storage
from crawler.net.fetcher import Response
from crawler.net.visit import Visit
from crawler.outcomes import Outcome
from crawler.pipeline.frontier_store import candidate_of
from crawler.telemetry.metrics import CrawlerMetrics
from policies import Candidate

WALL = 1_700_000_000.0  # the wall clock at monotonic 0
TOPIC = "solar energy panels"


class Clock:
    """The monotonic clock, moved by the test; `wall` is the wall clock beside it."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now

    def wall(self) -> float:
        return WALL + self.now


async def queued(db: AsyncEngine, *urls: str, score: float = 0.5) -> list[Candidate]:
    """These URLs queued in the database, as a crawl's seeds are; their candidates."""
    new = [storage.NewUrl(url, URL(url).host or "", 0, score) for url in urls]
    async with db.begin() as connection:
        return [candidate_of(row) for row in await storage.add_urls(connection, new)]


def page(candidate: Candidate, body: str = "", outcome: Outcome = Outcome.OK) -> Visit:
    """A visit that fetched `body` as the HTML page at the candidate's URL."""
    data = body.encode()
    response = Response(
        URL(candidate.url), 200, "text/html", "utf-8", None, None, None, data, False, len(data)
    )
    return Visit(candidate, outcome, candidate.url, response, datetime.now(UTC), seconds=0.1)


def html(*hrefs: str, words: str = TOPIC) -> str:
    anchors = "".join(f'<a href="{href}">{words}</a>' for href in hrefs)
    return f"<html><head><title>{words}</title></head><body><p>{words}</p>{anchors}</body></html>"


def sample(metrics: CrawlerMetrics, name: str, **labels: str) -> float:
    return metrics.registry.get_sample_value(name, labels) or 0.0
