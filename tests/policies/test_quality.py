"""Collection quality and schedule performance, O'Meara & Patel eq. (1)-(3)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from policies.offline.quality import (
    freshness,
    performance,
    recall,
    schedule_performance,
    upper_bound,
)


def test_recall_and_freshness_weigh_documents_by_relevance() -> None:
    assert recall([0.5, 0.25], [0.5, 0.25, 0.25]) == pytest.approx(0.75)
    assert freshness([0.5], [0.5, 0.25, 0.25]) == pytest.approx(0.5)
    assert recall([], [0.0]) == 0.0
    assert freshness([], []) == 1.0  # an empty collection holds nothing stale


def test_quality_is_the_smaller_of_recall_and_freshness_summed_over_time() -> None:
    recalls = np.array([0.2, 0.6, 1.0])
    fresh = np.array([1.0, 0.5, 0.9])
    assert performance(recalls, fresh) == pytest.approx(0.2 + 0.5 + 0.9)
    assert performance(recalls) == pytest.approx(1.8)


def test_a_schedule_sums_its_recall_after_each_fetch() -> None:
    # recall 3/6, 5/6, 6/6 after the three fetches
    assert schedule_performance(np.array([3.0, 2.0, 1.0]), 6.0) == pytest.approx(7 / 3)
    assert schedule_performance(np.array([1.0, 2.0, 3.0]), 6.0) == pytest.approx(10 / 6)


def test_the_upper_bound_is_the_best_of_every_order() -> None:
    relevance = np.array([0.1, 0.9, 0.0, 0.4, 0.4])
    total = float(relevance.sum())
    best = max(
        schedule_performance(np.array(order), total)
        for order in itertools.permutations(relevance.tolist())
    )
    assert upper_bound(relevance) == pytest.approx(best)
    # over the first two fetches: 0.9 then 0.4
    assert upper_bound(relevance, 2) == pytest.approx((0.9 + 1.3) / total)


def test_fetches_beyond_the_pages_keep_a_crawl_within_the_upper_bound() -> None:
    """A crawl that also fetched URLs the web does not list (errors, redirects): each
    such fetch finds nothing, and the bound over as many fetches holds the full recall
    over them, so no order beats it."""
    relevance = np.array([0.1, 0.9, 0.4])
    crawl = np.array([0.0, 0.9, 0.0, 0.4, 0.1, 0.0])  # every page, and three fetches more
    bound = upper_bound(relevance, len(crawl))
    assert bound == pytest.approx((0.9 + 1.3 + 1.4 * 4) / 1.4)
    assert schedule_performance(crawl, float(relevance.sum())) <= bound
    assert bound > upper_bound(relevance)
