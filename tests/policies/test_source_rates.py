from __future__ import annotations

import math

import numpy as np
import pytest

from policies.revisit.source_rates import ChangeRate, MeanWorth, NotFittedError, PoissonRate


def test_poisson_rate_recovers_the_rate_and_starts_from_its_prior() -> None:
    rng = np.random.default_rng(3)
    estimate = PoissonRate(prior_rate=1.0, prior_weight=1.0)
    estimate.partial_fit([0], [0.5])
    assert estimate.rate_ == pytest.approx(1.0 / 1.5)  # one pseudo-visit of the prior
    gaps = rng.uniform(0.5, 2.0, 400)
    estimate.partial_fit(rng.poisson(12.0 * gaps), gaps)
    assert estimate.rate_ == pytest.approx(12.0, rel=0.05)
    assert estimate.rate_std_ < 0.5
    assert estimate.n_visits_ == 401


def test_change_rate_is_unbiased_enough_and_finite_when_everything_changed() -> None:
    rng = np.random.default_rng(5)
    true_rate, interval = 0.8, 1.0
    estimates = []
    for _ in range(200):
        changed = rng.random(50) < 1 - math.exp(-true_rate * interval)
        estimates.append(ChangeRate().partial_fit(changed, [interval] * 50).rate_)
    assert np.mean(estimates) == pytest.approx(true_rate, rel=0.05)
    always = ChangeRate().partial_fit([True] * 10, [1.0] * 10)
    assert math.isfinite(always.rate_)
    assert always.rate_ == pytest.approx(-math.log(0.5 / 10.5))
    never = ChangeRate().partial_fit([False] * 10, [1.0] * 10)
    assert (never.rate_, math.copysign(1.0, never.rate_)) == (0.0, 1.0)  # not -0.0


def test_mean_worth_blends_the_prior_with_what_was_seen() -> None:
    worth = MeanWorth(prior_mean=0.1, prior_weight=2.0)
    assert worth.mean_ == pytest.approx(0.1)
    worth.partial_fit([0.6, 0.6])
    assert worth.mean_ == pytest.approx((0.2 + 1.2) / 4)


def test_bad_input_and_unfitted_estimates_are_clear_errors() -> None:
    with pytest.raises(NotFittedError, match="partial_fit"):
        _ = PoissonRate().rate_
    with pytest.raises(NotFittedError, match="partial_fit"):
        _ = ChangeRate().rate_
    with pytest.raises(ValueError, match="a time > 0"):
        PoissonRate().partial_fit([1], [0.0])
    with pytest.raises(ValueError, match="prior_rate must be a positive"):
        PoissonRate(prior_rate=-1).partial_fit([1], [1.0])
    with pytest.raises(ValueError, match="interval between visits"):
        ChangeRate().partial_fit([True], [-1.0])
    with pytest.raises(ValueError, match="worth must be a non-negative"):
        MeanWorth().partial_fit([math.nan])
