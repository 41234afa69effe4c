"""The quality of a collection and of a request schedule (O'Meara & Patel, eq. 1-3).

Recall is the relevance the collection holds of what the web holds; freshness the
relevance of its up-to-date entries of all it holds; the quality M is the smaller of
the two, and a schedule's performance P is the integral of M over its duration, one
unit of time per fetch. On a graph that does not change (freshness 1) P depends only on
the order pages are fetched in, and two references frame it: the upper bound fetches
pages in decreasing relevance as if every page were linked from the start, and the
random schedule fetches a uniformly chosen known page at every step.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def recall(collected: Iterable[float], on_the_web: Iterable[float]) -> float:
    """Eq. (1), R: the relevance of the collection's current entries over the web's."""
    total = float(sum(on_the_web))
    return float(sum(collected)) / total if total > 0 else 0.0


def freshness(up_to_date: Iterable[float], collected: Iterable[float]) -> float:
    """Eq. (1), F: the relevance of the up-to-date entries over all the collection's."""
    total = float(sum(collected))
    return float(sum(up_to_date)) / total if total > 0 else 1.0


def performance(recalls: np.ndarray, freshnesses: np.ndarray | None = None) -> float:
    """Eq. (2)-(3): P, the sum over unit steps of min(recall, freshness)."""
    quality = recalls if freshnesses is None else np.minimum(recalls, freshnesses)
    return float(np.sum(quality))


def schedule_performance(fetched_relevance: np.ndarray, total_relevance: float) -> float:
    """P of fetching pages of these relevances in this order, the web not changing."""
    if total_relevance <= 0:
        return 0.0
    return performance(np.cumsum(fetched_relevance, dtype=np.float64) / total_relevance)


def upper_bound(relevance: np.ndarray, steps: int | None = None) -> float:
    """P of the best order with no links to follow, most relevant first, over the first
    `steps` fetches (all pages by default). Fetches beyond the pages (a crawl that also
    fetched redirects, errors, pages the web does not list) hold the full recall."""
    ordered = np.sort(np.asarray(relevance, dtype=np.float64))[::-1]
    if steps is not None and steps > len(ordered):
        ordered = np.concatenate([ordered, np.zeros(steps - len(ordered))])
    return schedule_performance(ordered[:steps], float(ordered.sum()))
