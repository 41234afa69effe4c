"""A finished or running crawl read back from its database, as the series a report draws:
pages in the order they were fetched, outcomes, the timeline of the controllers, and the
time politeness kept each host closed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import storage
from crawler.config import defaults
from crawler.reporting.collection import check_database_exists
from crawler.reporting.ground_truth import read_relevance


@dataclass
class HostWaits:
    requests: int = 0
    closed_seconds: float = 0.0


@dataclass
class CrawlHistory:
    topic: str
    relevance_threshold: float
    # fetched pages in the order they were last fetched
    urls: list[str]
    fetched_at: np.ndarray  # unix seconds
    relevance: np.ndarray  # the crawler's score; NaN where the page was not scored
    outcomes: Counter[str]  # every URL done: "ok" or its error
    timeline: list[storage.TimelineSample]
    host_waits: dict[str, HostWaits] = field(default_factory=dict)
    titles: list[str | None] = field(default_factory=list)  # of `urls`' pages

    def harvest(self) -> np.ndarray:
        """Relevant (by the crawler's score) share of the first N fetched, for every N."""
        return harvest_rate(np.nan_to_num(self.relevance, nan=0.0) >= self.relevance_threshold)

    def truth(self, relevance_by_url: Mapping[str, float]) -> np.ndarray:
        """The ground-truth relevance of each fetched page, in fetch order (`first_found`)."""
        return first_found(self.urls, relevance_by_url)


def first_found(urls: Iterable[str], relevance_by_url: Mapping[str, float]) -> np.ndarray:
    """The ground-truth relevance each fetch found, in fetch order: a page's at its first
    fetch, 0 at a later one, and 0 for a page the truth does not know. A URL that
    redirects to a page fetched already is a fetch of that page again (its row names it
    as its final URL), and finds nothing new."""
    seen: set[str] = set()
    found = []
    for url in urls:
        found.append(0.0 if url in seen else relevance_by_url.get(url, 0.0))
        seen.add(url)
    return np.array(found, dtype=np.float64)


def harvest_rate(relevant: np.ndarray) -> np.ndarray:
    """The share of relevant pages among the first 1, 2, ..., N fetched."""
    relevant = np.asarray(relevant, dtype=np.float64)
    return np.cumsum(relevant) / np.arange(1, len(relevant) + 1)


async def read_history(db: str) -> CrawlHistory:
    check_database_exists(db)
    engine = storage.open_engine(db)
    try:
        async with engine.connect() as connection:
            meta = await storage.get_meta(connection)
            rows = [row async for row in storage.iter_export(connection)]
            timeline = await storage.load_timeline(connection)
    finally:
        await engine.dispose()
    outcomes = Counter(row.error or "ok" for row in rows)
    fetched = sorted((row for row in rows if row.fetched_at is not None), key=_fetched_at)
    threshold = float(meta.get("relevance_threshold", defaults.RELEVANCE_THRESHOLD))
    history = CrawlHistory(
        topic=meta.get("topic", ""),
        relevance_threshold=threshold,
        urls=[row.final_url or row.url for row in fetched],
        fetched_at=np.array([_fetched_at(row) for row in fetched], dtype=np.float64),
        relevance=np.array(
            [np.nan if row.relevance is None else row.relevance for row in fetched],
            dtype=np.float64,
        ),
        outcomes=outcomes,
        timeline=timeline,
        titles=[row.title for row in fetched],
    )
    for sample in timeline:
        for host, (requests, closed) in sample.values.get("politeness", {}).items():
            waits = history.host_waits.setdefault(host, HostWaits())
            waits.requests += int(requests)
            waits.closed_seconds += float(closed)
    return history


def read_ground_truth(path: Path) -> dict[str, float]:
    """A ground-truth directory (as `crawler testbed --ground-truth DIR` writes) or its
    pages.tsv: the relevance of every page by URL."""
    path = Path(path)
    return read_relevance(path / "pages.tsv" if path.is_dir() else path)


def _fetched_at(row: storage.ExportRecord) -> float:
    assert row.fetched_at is not None
    return row.fetched_at.timestamp()
