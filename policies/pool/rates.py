"""Online estimates of the rates the fetcher pool models need.

The page arrival rate per active fetcher (lambda: one over the time from dispatching a
fetch to its page reaching the processor's queue) and the processor's service rate (mu:
one over a server's busy time a page) are exponential rates estimated from observed
durations. Each estimate is a Gamma posterior over the rate whose
evidence decays by half every `half_life` observations, so it follows a crawl whose
hosts and pages change instead of averaging over all of it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Self

from policies.errors import NotFittedError

DEFAULT_HALF_LIFE = 200.0  # observations after which old evidence counts half


class RateEstimator:
    """Rate of an exponential distribution from its samples, with discounting.

    After observations d_1..d_n (newest last) with weights w_i = 2**(-(n - i) / half_life),
    the posterior is Gamma(shape = sum w_i, rate = sum w_i d_i) (a flat prior): the rate
    estimate is shape / rate, its standard deviation sqrt(shape) / rate.
    """

    def __init__(self, *, half_life: float = DEFAULT_HALF_LIFE) -> None:
        self.half_life = half_life

    def partial_fit(self, durations: Iterable[float]) -> Self:
        if not (math.isfinite(self.half_life) and self.half_life > 0):
            raise ValueError(f"half_life must be a positive number, got {self.half_life}")
        if not hasattr(self, "weight_"):
            self.weight_ = 0.0  # the discounted number of observations
            self.total_ = 0.0  # the discounted sum of durations
            self.n_observations_ = 0
        decay = 2.0 ** (-1.0 / self.half_life)
        for duration in durations:
            if not (math.isfinite(duration) and duration >= 0):
                raise ValueError(f"a duration must be a non-negative number, got {duration}")
            self.weight_ = self.weight_ * decay + 1.0
            self.total_ = self.total_ * decay + duration
            self.n_observations_ += 1
        return self

    @property
    def rate_(self) -> float:
        self._check_fitted()
        return self.weight_ / self.total_ if self.total_ > 0 else math.inf

    @property
    def rate_std_(self) -> float:
        """The posterior standard deviation of the rate: its uncertainty."""
        self._check_fitted()
        return math.sqrt(self.weight_) / self.total_ if self.total_ > 0 else math.inf

    @property
    def mean_duration_(self) -> float:
        self._check_fitted()
        return self.total_ / self.weight_

    def get_params(self) -> dict[str, float]:
        return {"half_life": self.half_life}

    def _check_fitted(self) -> None:
        if not getattr(self, "n_observations_", 0):
            raise NotFittedError("RateEstimator has seen no durations: call partial_fit first")


class KeyedRates:
    """One RateEstimator per key (e.g. per host) and one over all of them."""

    def __init__(self, *, half_life: float = DEFAULT_HALF_LIFE, max_keys: int = 10_000) -> None:
        self.half_life = half_life
        self.max_keys = max_keys
        self.overall = RateEstimator(half_life=half_life)
        self._by_key: dict[str, RateEstimator] = {}

    def observe(self, key: str, duration: float) -> None:
        self.overall.partial_fit([duration])
        estimator = self._by_key.pop(key, None)  # re-inserted: the dict keeps recency order
        if estimator is None:
            estimator = RateEstimator(half_life=self.half_life)
            if len(self._by_key) >= self.max_keys:  # forget the key seen least recently
                del self._by_key[next(iter(self._by_key))]
        self._by_key[key] = estimator.partial_fit([duration])

    def get(self, key: str) -> RateEstimator | None:
        return self._by_key.get(key)

    @property
    def fitted(self) -> bool:
        return getattr(self.overall, "n_observations_", 0) > 0

    def __len__(self) -> int:
        return len(self._by_key)
