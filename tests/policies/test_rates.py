from __future__ import annotations

import numpy as np
import pytest

from policies.pool.rates import KeyedRates, NotFittedError, RateEstimator


def test_the_rate_of_exponential_samples_is_recovered_with_its_uncertainty() -> None:
    rng = np.random.default_rng(7)
    estimator = RateEstimator(half_life=1e9)  # no discounting
    estimator.partial_fit(rng.exponential(1 / 4.0, 100))
    early_std = estimator.rate_std_
    estimator.partial_fit(rng.exponential(1 / 4.0, 9_900))
    assert estimator.rate_ == pytest.approx(4.0, rel=0.03)
    assert estimator.rate_std_ == pytest.approx(4.0 / np.sqrt(10_000), rel=0.05)
    assert estimator.rate_std_ < early_std / 5
    assert estimator.mean_duration_ == pytest.approx(0.25, rel=0.03)
    assert estimator.get_params() == {"half_life": 1e9}


def test_discounting_follows_a_rate_that_changes() -> None:
    rng = np.random.default_rng(1)
    discounted, everything = RateEstimator(half_life=100), RateEstimator(half_life=1e9)
    for estimator in (discounted, everything):
        estimator.partial_fit(rng.exponential(1 / 2.0, 2_000))
        estimator.partial_fit(rng.exponential(1 / 10.0, 1_000))
    assert discounted.rate_ == pytest.approx(10.0, rel=0.15)
    assert everything.rate_ < 5.0  # still dragged down by the old regime


def test_an_unfitted_estimator_and_bad_durations_are_clear_errors() -> None:
    with pytest.raises(NotFittedError, match="partial_fit"):
        _ = RateEstimator().rate_
    with pytest.raises(ValueError, match="non-negative"):
        RateEstimator().partial_fit([-1.0])
    with pytest.raises(ValueError, match="half_life"):
        RateEstimator(half_life=0).partial_fit([1.0])


def test_keyed_rates_keep_one_estimate_per_key_and_one_overall() -> None:
    rates = KeyedRates(max_keys=2)
    assert not rates.fitted
    rates.observe("a", 1.0)
    rates.observe("b", 0.5)
    rates.observe("a", 1.0)
    rates.observe("c", 0.25)  # "b" was seen least recently: it goes
    assert rates.fitted
    assert len(rates) == 2
    assert rates.get("b") is None
    estimate_a = rates.get("a")
    assert estimate_a is not None
    assert estimate_a.rate_ == pytest.approx(1.0)
    assert rates.overall.n_observations_ == 4
