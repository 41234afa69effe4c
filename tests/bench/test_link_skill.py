"""The measures of `bench/link_skill.py`: a ranking's AUC, what a queued link would
reveal, and the features beside the score as one matrix. No crawl is run here
(`tests/bench/test_realweb.py` runs the script on what nginx serves)."""

from __future__ import annotations

import math
from types import ModuleType

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from crawler.experiments import TruthWeb
from policies.link_graph import LinkGraph
from tests.bench.scripts import load_script


@pytest.fixture(scope="module")
def link_skill() -> ModuleType:
    return load_script("link_skill.py")


def test_the_auc_is_the_share_of_pairs_ranked_the_right_way(link_skill: ModuleType) -> None:
    rng = np.random.default_rng(3)
    values = rng.integers(0, 5, 60).astype(float)  # many ties, which count half
    positive = rng.random(60) < 0.2
    assert link_skill.auc(values, positive) == pytest.approx(roc_auc_score(positive, values))
    # by hand: positives at 3 and 1 against others at 2 and 0 -> 3 of 4 pairs right
    by_hand = link_skill.auc(np.array([3.0, 2.0, 1.0, 0.0]), np.array([True, False, True, False]))
    assert by_hand == 0.75
    assert math.isnan(link_skill.auc(values, np.zeros(60, dtype=bool)))
    assert math.isnan(link_skill.auc(values, np.ones(60, dtype=bool)))


def test_a_link_reveals_the_relevant_pages_nobody_knows_yet(link_skill: ModuleType) -> None:
    urls = [f"http://h/{i}" for i in range(6)]
    # page 0 (fetched) links to 1 and 2 (queued); 1 links to 3 (relevant, unknown) and 4
    # (relevant, but queued); 2 links to 5 (relevant, unknown) and 3
    graph = LinkGraph.from_arrays(
        relevance=np.array([0.0, 0.0, 0.0, 0.5, 0.5, 0.5]),
        sources=np.array([0, 0, 1, 1, 2, 2]),
        targets=np.array([1, 2, 3, 4, 5, 3]),
        host=np.zeros(6, dtype=np.int32),
        seeds=np.array([0], dtype=np.int32),
    )
    web = TruthWeb((urls[0],), "topic", dict(zip(urls, graph.relevance.tolist(), strict=True)), 0.1)
    recording = link_skill._Recording([], web, graph)
    recording._fetched_urls.add(urls[0])
    revealed = recording.reveals([urls[1], urls[2], urls[4], "http://elsewhere/"])
    assert revealed.tolist() == [1.0, 2.0, 0.0, 0.0]


def test_the_features_and_the_score_make_one_row_a_link(link_skill: ModuleType) -> None:
    rows = [
        (np.array([1, 5], dtype=np.int32), np.array([0.5, 2.0])),
        (np.array([0], dtype=np.int32), np.array([1.0])),
    ]
    matrix = link_skill.with_score(rows, np.array([0.25, 0.75]), 8).toarray()
    expected = np.zeros((2, 9))
    expected[0, [1, 5, 8]] = [0.5, 2.0, 0.25]
    expected[1, [0, 8]] = [1.0, 0.75]
    assert np.array_equal(matrix, expected)


def test_a_median_leaves_out_what_is_no_number(link_skill: ModuleType) -> None:
    assert link_skill.median([0.5, math.nan, 0.7, 0.9]) == 0.7
    assert math.isnan(link_skill.median([math.nan, math.nan]))
