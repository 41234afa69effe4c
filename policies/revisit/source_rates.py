"""Learning a source's parameters from its re-visits (Avrachenkov & Borkar, Section 9).

- `PoissonRate`: the arrival rate of new items Lambda, when a visit can count the items
  that appeared since the last one: a Gamma posterior (a prior of `prior_weight`
  pseudo-observations at `prior_rate`), so a source seen twice already has a sensible
  estimate.
- `ChangeRate`: the same rate when a visit can only tell whether the page changed, by
  Cho & Garcia-Molina's bias-reduced estimator ("Estimating frequency of change", 2003):
  with n visits at mean interval I of which X saw a change,
  Lambda = -log((n - X + 0.5) / (n + 0.5)) / I, finite even when every visit changed.
- `MeanWorth`: the mean relevance xi of new items, with a prior.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Self

import numpy as np

from policies.errors import NotFittedError


def _check_positive(name: str, value: float) -> None:
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a positive number, got {value}")


# The estimates from their sufficient statistics, for many sources at once; the classes
# below keep those statistics one visit at a time.


Values = np.ndarray | float


def poisson_rates(
    items: Values, exposure: Values, *, prior_rate: float, prior_weight: float
) -> np.ndarray:
    """The Gamma posterior mean of each rate: (prior items + items) / (prior + exposure)."""
    return (prior_rate * prior_weight + np.asarray(items)) / (prior_weight + np.asarray(exposure))


def change_rates(changed: Values, visits: Values, exposure: Values) -> np.ndarray:
    """Cho & Garcia-Molina's estimate; NaN where there is no visit yet."""
    with np.errstate(divide="ignore", invalid="ignore"):
        n = np.asarray(visits, dtype=np.float64)
        mean_interval = np.asarray(exposure) / n
        # log(a/b) rather than -log(b/a): no change at all is 0.0, not -0.0
        return np.log((n + 0.5) / (n - np.asarray(changed) + 0.5)) / mean_interval


def mean_worths(
    total: Values, items: Values, *, prior_mean: float, prior_weight: float
) -> np.ndarray:
    return (prior_mean * prior_weight + np.asarray(total)) / (prior_weight + np.asarray(items))


class PoissonRate:
    """Items per unit of time, from counts of new items over the time since the last visit."""

    def __init__(self, *, prior_rate: float = 1.0, prior_weight: float = 1.0) -> None:
        self.prior_rate = prior_rate
        self.prior_weight = prior_weight  # in visits' worth of exposure at the prior rate

    def partial_fit(self, counts: Iterable[int], exposures: Iterable[float]) -> Self:
        _check_positive("prior_rate", self.prior_rate)
        _check_positive("prior_weight", self.prior_weight)
        if not hasattr(self, "items_"):
            self.items_ = 0.0
            self.exposure_ = 0.0
            self.n_visits_ = 0
        for count, exposure in zip(counts, exposures, strict=True):
            if count < 0 or not (math.isfinite(exposure) and exposure > 0):
                raise ValueError(
                    f"a visit needs a count >= 0 and a time > 0, got {count} items in {exposure}"
                )
            self.items_ += count
            self.exposure_ += exposure
            self.n_visits_ += 1
        return self

    @property
    def rate_(self) -> float:
        self._check_fitted()
        return float(
            poisson_rates(
                float(self.items_),
                float(self.exposure_),
                prior_rate=self.prior_rate,
                prior_weight=self.prior_weight,
            )
        )

    @property
    def rate_std_(self) -> float:
        self._check_fitted()
        shape = self.prior_rate * self.prior_weight + self.items_
        return math.sqrt(shape) / (self.prior_weight + self.exposure_)

    def _check_fitted(self) -> None:
        if not getattr(self, "n_visits_", 0):
            raise NotFittedError("PoissonRate has seen no visit: call partial_fit first")


class ChangeRate:
    """Changes per unit of time, from whether each visit found the page changed."""

    def partial_fit(self, changed: Iterable[bool], intervals: Iterable[float]) -> Self:
        if not hasattr(self, "n_visits_"):
            self.n_visits_ = 0
            self.n_changed_ = 0
            self.total_interval_ = 0.0
        for was_changed, interval in zip(changed, intervals, strict=True):
            _check_positive("an interval between visits", interval)
            self.n_visits_ += 1
            self.n_changed_ += bool(was_changed)
            self.total_interval_ += interval
        return self

    @property
    def rate_(self) -> float:
        if not getattr(self, "n_visits_", 0):
            raise NotFittedError("ChangeRate has seen no visit: call partial_fit first")
        return float(
            change_rates(
                float(self.n_changed_),
                float(self.n_visits_),
                float(self.total_interval_),
            )
        )


class MeanWorth:
    """The mean worth (relevance) of a source's new items."""

    def __init__(self, *, prior_mean: float = 0.1, prior_weight: float = 1.0) -> None:
        self.prior_mean = prior_mean
        self.prior_weight = prior_weight  # in items

    def partial_fit(self, worths: Iterable[float]) -> Self:
        if not hasattr(self, "total_"):
            self.total_ = 0.0
            self.n_items_ = 0
        for worth in worths:
            if not (math.isfinite(worth) and worth >= 0):
                raise ValueError(f"an item's worth must be a non-negative number, got {worth}")
            self.total_ += worth
            self.n_items_ += 1
        return self

    @property
    def mean_(self) -> float:
        return float(
            mean_worths(
                float(getattr(self, "total_", 0.0)),
                float(getattr(self, "n_items_", 0)),
                prior_mean=self.prior_mean,
                prior_weight=self.prior_weight,
            )
        )
