"""A user's labels of stored pages (relevant to the topic or not), and the pages worth
labelling next.

A page can be labelled once it is stored with its text: the topic model learns from the
text (`policies.relevance.labels`). Labelling a page again replaces its label.

The pages worth labelling are those the topic model is least sure of (uncertainty
sampling): a page's margin is how far its relevance, as scored when it was fetched, lies
from the crawl's relevance threshold (recorded in crawl_meta at the crawl's start), the
boundary between what the crawl counts relevant and what not. The model's relevance is
its log-odds on the threshold's scale (`policies.relevance.labels`), so the smallest margin is the
probability nearest one half.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Collection
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from storage.dialects import conflict_insert
from storage.models import CrawlMeta, LabelRow, PageText, UrlRow

# The crawl's threshold when its database records none: the crawler's default
DEFAULT_RELEVANCE_THRESHOLD = 0.1


@dataclass(frozen=True, slots=True)
class Label:
    url_id: int
    relevant: bool
    labelled_at: float  # unix seconds


@dataclass(frozen=True, slots=True)
class UncertainPage:
    url_id: int
    url: str
    title: str | None
    relevance: float
    margin: float  # |relevance - the crawl's relevance threshold|


async def save_label(engine: AsyncEngine, url_id: int, relevant: bool) -> bool:
    """Label a stored page relevant or not, in place of any label it had; False when no
    page stored with its text has that id."""
    async with engine.begin() as connection:
        stored = await connection.scalar(select(PageText.url_id).where(PageText.url_id == url_id))
        if stored is None:
            return False
        statement = conflict_insert(connection, LabelRow).values(
            url_id=url_id, relevant=bool(relevant), labelled_at=time.time()
        )
        statement = statement.on_conflict_do_update(
            index_elements=["url_id"],
            set_={
                "relevant": statement.excluded.relevant,
                "labelled_at": statement.excluded.labelled_at,
            },
        )
        await connection.execute(statement)
    return True


async def load_labels(engine: AsyncEngine, since: float = 0.0) -> list[Label]:
    """The labels given at or after `since` (unix seconds), oldest first."""
    async with engine.connect() as connection:
        result = await connection.execute(
            select(LabelRow.url_id, LabelRow.relevant, LabelRow.labelled_at)
            .where(LabelRow.labelled_at >= since)
            .order_by(LabelRow.labelled_at, LabelRow.url_id)
        )
        return [Label(url_id, bool(relevant), at) for url_id, relevant, at in result.all()]


async def labelled_texts(engine: AsyncEngine, url_ids: Collection[int]) -> dict[int, str]:
    """The stored main text of each of these pages that has one, by URL id."""
    if not url_ids:
        return {}
    async with engine.connect() as connection:
        result = await connection.execute(
            select(PageText.url_id, PageText.text).where(PageText.url_id.in_(list(url_ids)))
        )
        return {url_id: zlib.decompress(blob).decode() for url_id, blob in result.all()}


async def uncertain_pages(engine: AsyncEngine, limit: int) -> list[UncertainPage]:
    """The unlabelled stored pages whose relevance lies nearest the crawl's relevance
    threshold, the nearest first (ties by id)."""
    if limit < 1:
        raise ValueError(f"the limit of pages must be at least 1, not {limit}")
    async with engine.connect() as connection:
        recorded = await connection.scalar(
            select(CrawlMeta.value).where(CrawlMeta.key == "relevance_threshold")
        )
        threshold = DEFAULT_RELEVANCE_THRESHOLD if recorded is None else float(recorded)
        # the nearest on each side, each read in the relevance index's order
        pages = []
        for side, order in (
            (UrlRow.relevance >= threshold, UrlRow.relevance.asc()),
            (UrlRow.relevance < threshold, UrlRow.relevance.desc()),
        ):
            result = await connection.execute(
                select(UrlRow.id, UrlRow.url, UrlRow.title, UrlRow.relevance)
                .join(PageText, PageText.url_id == UrlRow.id)
                .outerjoin(LabelRow, LabelRow.url_id == UrlRow.id)
                .where(side, LabelRow.url_id.is_(None))
                .order_by(order, UrlRow.id)
                .limit(limit)
            )
            pages += [
                UncertainPage(url_id, url, title, relevance, abs(relevance - threshold))
                for url_id, url, title, relevance in result.all()
                if relevance is not None  # the side's condition holds it; for the types
            ]
        return sorted(pages, key=lambda page: (page.margin, page.url_id))[:limit]
