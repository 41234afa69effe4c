"""The user's labels reach the topic model: read at the crawl's start and whenever the
labels table changes (`crawler.engine.checkpoints` asks every `LABEL_INTERVAL`), from
whichever process wrote them: the daemon's API, another daemon's, another program.
Every daemon of a shared crawl reads the same table, so each learns from every label.

A label is learned from its page's stored main text, counted once; when the labels
change, the model is fitted again on all of them (`TopicScorer.learn_labels`), and the
pages scored from then on follow it. Pages stored before keep the relevance they were
given.
"""

from __future__ import annotations

import logging

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine

import storage
from crawler.telemetry.metrics import CrawlerMetrics
from policies import TopicScorer
from policies.relevance import Rows

log = logging.getLogger(__name__)


class LabelWatch:
    def __init__(
        self,
        *,
        db: AsyncEngine,
        scorer: TopicScorer,
        relevance_threshold: float,
        metrics: CrawlerMetrics,
    ) -> None:
        self.db = db
        self.scorer = scorer
        self.relevance_threshold = relevance_threshold
        self.metrics = metrics
        self.learned: dict[int, bool] = {}  # the labels the model was fitted on
        self._counts: dict[int, Rows] = {}  # each labelled page's term counts

    async def refresh(self) -> None:
        """Learn the labels again if they changed. A read that fails leaves the model as
        it is until the next refresh: the crawl goes on."""
        try:
            labels = {label.url_id: label.relevant for label in await storage.load_labels(self.db)}
            if labels == self.learned:
                return
            unread = [url_id for url_id in labels if url_id not in self._counts]
            texts = await storage.labelled_texts(self.db, unread)
        except (SQLAlchemyError, OSError) as error:
            log.warning("could not read the labels: %s", error)
            return
        # SciPy's optimiser fits the model: loaded by a crawl that has labels, no other
        from policies.relevance.labels import LabelModel

        counter = self.scorer.counter_
        for url_id, text in texts.items():
            self._counts[url_id] = counter.count([text])
        learnable = [url_id for url_id in labels if url_id in self._counts]
        self.scorer.learn_labels(
            Rows.concat([self._counts[url_id] for url_id in learnable], counter.n_features),
            [labels[url_id] for url_id in learnable],
            LabelModel(threshold=self.relevance_threshold),
        )
        self.learned = labels
        self.metrics.labels.set(len(learnable))
        log.info("the topic learned from %d labelled pages", len(learnable))
