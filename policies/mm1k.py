"""The static fetcher pool: an M/M/1/K queue in front of the processor.

Talim, Liu, Nain & Coffman, "Controlling Robots of Web Search Engines", Section 2.
N fetchers each bring pages at rate lambda (Poisson); the processor serves at rate mu
(exponential); the buffer holds K pages, the one in service included. The cost of a
pool is gamma * P(processor idle) + loss rate (eq. 2, 4); Lemma 1 gives the traffic
rho = N lambda / mu that minimises it, Proposition 1 the best whole number of fetchers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize_scalar


def check_queue(*, arrival_rate: float, service_rate: float, buffer: int, gamma: float) -> None:
    """Raise ValueError naming the first parameter outside the model's range."""
    for name, value in (("arrival rate", arrival_rate), ("service rate", service_rate)):
        if not (math.isfinite(value) and value > 0):
            raise ValueError(f"the {name} must be a positive number, got {value}")
    if not (math.isfinite(gamma) and gamma > 0):
        raise ValueError(f"gamma must be a positive number, got {gamma}")
    if buffer < 2:
        raise ValueError(f"the buffer K must hold at least 2 pages, got {buffer}")


def stationary_probabilities(rho: float, buffer: int) -> np.ndarray:
    """P(X = i), i = 0..K, of the M/M/1/K queue with traffic rho (eq. 3)."""
    if rho <= 0:
        probabilities = np.zeros(buffer + 1)
        probabilities[0] = 1.0
        return probabilities
    # rho**i / sum(rho**j), computed from the larger end when rho > 1 so nothing overflows
    exponents = np.arange(buffer + 1, dtype=np.float64)
    if rho > 1:
        exponents = exponents - buffer
    weights = np.power(rho, exponents)
    return weights / weights.sum()


def cost(rho: float, *, gamma: float, buffer: int, service_rate: float) -> float:
    """C(rho, gamma, K): gamma P(X = 0) + loss rate lambda N P(X = K) (eq. 2, 4)."""
    probabilities = stationary_probabilities(rho, buffer)
    return float(gamma * probabilities[0] + service_rate * rho * probabilities[-1])


def optimal_traffic(*, gamma: float, buffer: int, service_rate: float) -> float:
    """rho(gamma, K), the unique minimiser of C (Lemma 1): in (0, 1) when gamma < gamma(K)
    = mu (K + 2) / K, 1 when equal, above 1 when greater. C is unimodal, so a bounded
    scalar search finds it; the roots of eq. (6) sit next to a double root at 1, where
    rounding hides their sign.
    """
    critical = service_rate * (buffer + 2) / buffer  # gamma(K)
    if math.isclose(gamma, critical, rel_tol=1e-12):
        return 1.0

    def objective(rho: float) -> float:
        return cost(rho, gamma=gamma, buffer=buffer, service_rate=service_rate)

    if gamma < critical:
        low, high = 0.0, 1.0
    else:
        low, high = 1.0, 2.0
        while objective(high) < objective((1.0 + high) / 2):  # still falling: look further
            low, high = (1.0 + high) / 2, high * 2
    found = minimize_scalar(
        objective, bounds=(low, high), method="bounded", options={"xatol": 1e-12}
    )
    return float(found.x)


@dataclass(frozen=True, slots=True)
class StaticPool:
    fetchers: int
    cost: float
    traffic: float  # rho of that pool
    optimal_traffic: float  # rho(gamma, K), before rounding to whole fetchers


def optimal_fetchers(
    *, arrival_rate: float, service_rate: float, buffer: int, gamma: float
) -> StaticPool:
    """N(gamma, K): the better of the two whole pools around rho(gamma, K) mu / lambda
    (Proposition 1), and never fewer than one fetcher."""
    check_queue(arrival_rate=arrival_rate, service_rate=service_rate, buffer=buffer, gamma=gamma)
    best_rho = optimal_traffic(gamma=gamma, buffer=buffer, service_rate=service_rate)
    ideal = best_rho * service_rate / arrival_rate
    candidates = {max(1, math.floor(ideal)), max(1, math.ceil(ideal))}

    def pool_cost(n: int) -> float:
        return cost(
            n * arrival_rate / service_rate, gamma=gamma, buffer=buffer, service_rate=service_rate
        )

    fetchers = min(sorted(candidates), key=pool_cost)
    return StaticPool(
        fetchers=fetchers,
        cost=pool_cost(fetchers),
        traffic=fetchers * arrival_rate / service_rate,
        optimal_traffic=best_rho,
    )
