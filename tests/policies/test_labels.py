"""The topic learned from its user's labels: a logistic regression whose prior is the
topic's cosine (`policies.relevance.labels`), as the scorer uses it."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.linear_model import LogisticRegression

from policies import NotFittedError, TopicScorer
from policies.relevance.labels import LabelModel

TOPIC = "solar energy"
PANELS = "Solar panels and photovoltaic cells make electricity from sunlight on a rooftop."
HEATER = "A solar water heater warms the bath water in a tank on the roof."
LATER_PANELS = "Solar photovoltaic cells on the rooftop: electricity from sunlight, in a battery."
LATER_HEATER = "The water heater's tank keeps the bath warm; solar heat warms the water."
PAGES = [PANELS, HEATER, LATER_PANELS, LATER_HEATER, "Bake bread in a hot oven."]


def scorer_of_pages() -> TopicScorer:
    scorer = TopicScorer().fit([TOPIC])
    return scorer.partial_fit_counts(scorer.counter_.count(PAGES))


def test_with_no_labels_relevance_is_the_cosine_exactly() -> None:
    plain, learning = scorer_of_pages(), scorer_of_pages()
    none = learning.counter_.count([])
    learning.learn_labels(none, [], LabelModel(threshold=0.1))
    assert learning.label_model_ is None
    assert np.array_equal(learning.score(PAGES), plain.score(PAGES))


def test_labels_move_later_pages_the_labelled_way() -> None:
    scorer = scorer_of_pages()
    before = scorer.score([LATER_PANELS, LATER_HEATER])
    labelled = scorer.counter_.count([PANELS, HEATER])
    scorer.learn_labels(labelled, [True, False], LabelModel(threshold=0.1))
    panels, heater = scorer.score([LATER_PANELS, LATER_HEATER])
    assert panels > before[0]
    assert heater < before[1]


def test_forgetting_the_labels_scores_by_the_cosine_again() -> None:
    scorer, plain = scorer_of_pages(), scorer_of_pages()
    scorer.learn_labels(scorer.counter_.count([HEATER]), [False], LabelModel(threshold=0.1))
    assert not np.array_equal(scorer.score(PAGES), plain.score(PAGES))
    scorer.learn_labels(scorer.counter_.count([]), [], LabelModel(threshold=0.1))
    assert np.array_equal(scorer.score(PAGES), plain.score(PAGES))


def test_a_page_counts_as_relevant_exactly_when_the_model_says_even_odds_or_more() -> None:
    rng = np.random.default_rng(0)
    features = sp.random(40, 30, density=0.3, random_state=1, format="csr")
    cosines = rng.uniform(0.0, 0.3, 40)
    model = LabelModel(threshold=0.1).fit(features, cosines, rng.uniform(size=40) < 0.5)
    relevance = model.relevance(features, cosines)
    probability = model.probability(features, cosines)
    unclipped = (relevance > 0.0) & (relevance < 1.0)
    assert np.array_equal((relevance >= 0.1)[unclipped], (probability >= 0.5)[unclipped])
    assert model.slope * np.abs(relevance - 0.1)[unclipped] == pytest.approx(
        np.abs(np.log(probability / (1 - probability)))[unclipped]
    )


def test_at_the_threshold_the_fit_is_scikit_learns_penalised_logistic_regression() -> None:
    # every cosine at the threshold: no prior, and the model is liblinear's, whose
    # intercept is penalised as a weight
    rng = np.random.default_rng(2)
    features = sp.random(30, 12, density=0.5, random_state=3, format="csr")
    labels = rng.uniform(size=30) < 0.4
    ours = LabelModel(threshold=0.2, C=0.5).fit(features, np.full(30, 0.2), labels)
    theirs = LogisticRegression(solver="liblinear", C=0.5, tol=1e-10).fit(features, labels)
    assert ours.coef_ == pytest.approx(theirs.coef_[0], abs=1e-4)
    assert ours.intercept_ == pytest.approx(theirs.intercept_[0], abs=1e-4)


def test_labels_of_one_kind_only_are_learned_beside_the_prior() -> None:
    scorer = scorer_of_pages()
    before = scorer.score([LATER_HEATER])[0]
    scorer.learn_labels(scorer.counter_.count([HEATER]), [False], LabelModel(threshold=0.1))
    assert scorer.score([LATER_HEATER])[0] < before


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"threshold": 1.5}, "threshold must be in"),
        ({"threshold": 0.1, "slope": 0.0}, "slope must be positive"),
        ({"threshold": 0.1, "C": -1.0}, "C must be positive"),
    ],
)
def test_a_bad_hyperparameter_is_named(options: dict[str, float], message: str) -> None:
    features = sp.csr_matrix(np.eye(2))
    with pytest.raises(ValueError, match=message):
        LabelModel(**options).fit(features, np.zeros(2), np.array([True, False]))


def test_labels_and_pages_of_different_counts_are_refused() -> None:
    scorer = scorer_of_pages()
    with pytest.raises(ValueError, match="2 labelled pages and 1 labels"):
        scorer.learn_labels(
            scorer.counter_.count([PANELS, HEATER]), [True], LabelModel(threshold=0.1)
        )


def test_using_the_model_before_fit_is_a_clear_error() -> None:
    with pytest.raises(NotFittedError, match="call fit"):
        LabelModel(threshold=0.1).relevance(sp.csr_matrix((1, 2)), np.zeros(1))
