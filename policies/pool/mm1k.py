"""The static fetcher pool: an M/M/c/K queue in front of the processor.

Talim, Liu, Nain & Coffman, "Controlling Robots of Web Search Engines", Section 2.
N fetchers each bring pages at rate lambda (Poisson); the processor serves at rate mu
(exponential); the buffer holds K pages, the one in service included. The cost of a
pool is gamma * P(processor idle) + loss rate (eq. 2, 4); Lemma 1 gives the traffic
rho = N lambda / mu that minimises it, Proposition 1 the best whole number of fetchers.

A processor of c workers (`servers`), each serving at rate mu, makes the queue an
M/M/c/K; with c = 1 every function here is the paper's. The extension follows the
paper's own steps:
- The state is still X, the pages in the system (waiting or in service, at most K);
  arrivals still come at rate lambda N whatever X is, and a page is served by each busy
  worker, so X is a birth-death chain with death rate min(i, c) mu in state i. Its
  balance equations give the product form P(X = i) ~ a^i / i! for i <= c and
  a^c / c! rho^(i - c) above, with a = N lambda / mu the offered load and
  rho = a / c the load per worker: eq. (3) when c = 1. K >= c, so that every worker
  can be busy; K = c is the Erlang loss system.
- Starvation: the paper's P(X = 0) is the share of the processor's capacity left idle.
  With c workers that share is E[c - min(X, c)] / c, which is P(X = 0) when c = 1 and,
  by flow balance (pages served = pages admitted), 1 - rho (1 - P(X = K)). gamma keeps
  its meaning: idling the whole processor costs as much as losing gamma pages a second.
- Loss: arrivals see time averages (PASTA), so the loss rate is lambda N P(X = K)
  = c mu rho P(X = K), as in eq. (2).
So C(rho, gamma, K, c) = gamma (1 - rho (1 - P(X = K))) + c mu rho P(X = K), which is
eq. (4) when c = 1. rho is the load per worker throughout: rho = 1 means fetching as
fast as the whole processor works. Lemma 1's unique minimiser is proved only for
c = 1; for c > 1 the cost is unimodal in every case checked numerically (the tests
compare the search with a dense grid). The critical gamma at which the minimiser is
rho = 1 follows from dC/drho = 0 there (`critical_gamma`); it is mu (K + 2) / K when
c = 1. Proposition 2 (the optimum grows with gamma) carries over wherever the minimiser
is unique: its proof only uses that the idle share falls as rho grows, which holds for
every c (more arrivals keep more workers busy).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


def check_servers(*, buffer: int, servers: int) -> None:
    """Raise ValueError unless there are c >= 1 servers and K >= c places for them."""
    if servers < 1:
        raise ValueError(f"the processor needs at least 1 server, got {servers}")
    if buffer < servers:
        raise ValueError(
            f"the buffer K ({buffer}) must hold at least as many pages as the processor"
            f" has servers ({servers})"
        )


def check_queue(
    *, arrival_rate: float, service_rate: float, buffer: int, gamma: float, servers: int = 1
) -> None:
    """Raise ValueError naming the first parameter outside the model's range."""
    for name, value in (("arrival rate", arrival_rate), ("service rate", service_rate)):
        if not (math.isfinite(value) and value > 0):
            raise ValueError(f"the {name} must be a positive number, got {value}")
    if not (math.isfinite(gamma) and gamma > 0):
        raise ValueError(f"gamma must be a positive number, got {gamma}")
    if buffer < 2:
        raise ValueError(f"the buffer K must hold at least 2 pages, got {buffer}")
    check_servers(buffer=buffer, servers=servers)


def stationary_probabilities(rho: float, buffer: int, servers: int = 1) -> np.ndarray:
    """P(X = i), i = 0..K, of the M/M/c/K queue with load rho per server: proportional
    to rho^i c^min(i, c) / min(i, c)!, i.e. a^i / i! up to c and a^c / c! rho^(i - c)
    above (a = c rho); eq. (3) when c = 1."""
    if rho <= 0:
        probabilities = np.zeros(buffer + 1)
        probabilities[0] = 1.0
        return probabilities
    # rho**i / sum(rho**j), computed from the larger end when rho > 1 so nothing overflows
    exponents = np.arange(buffer + 1, dtype=np.float64)
    if rho > 1:
        exponents = exponents - buffer
    weights = np.power(rho, exponents)
    if servers > 1:
        # c^m / m! with m = min(i, c), over its largest value (at m = c) so it stays in
        # (0, 1]; its smallest, c! / c^c, is about exp(-c), so the weights never all vanish
        busy = np.minimum(np.arange(buffer + 1), servers)
        log_factor = busy * math.log(servers) - np.array([math.lgamma(m + 1.0) for m in busy])
        weights = weights * np.exp(log_factor - log_factor.max())
    return weights / weights.sum()


def idle_share(probabilities: np.ndarray, servers: int = 1) -> float:
    """E[c - min(X, c)] / c: the share of the processor's capacity left idle; P(X = 0)
    when c = 1 (the paper's starvation probability)."""
    idle_servers = servers - np.arange(servers)  # c - i in the states i < c
    return float(probabilities[:servers] @ idle_servers / servers)


def cost(rho: float, *, gamma: float, buffer: int, service_rate: float, servers: int = 1) -> float:
    """C(rho, gamma, K, c): gamma (idle share) + loss rate lambda N P(X = K), with
    lambda N = c mu rho; gamma P(X = 0) + mu rho P(X = K) when c = 1 (eq. 2, 4)."""
    probabilities = stationary_probabilities(rho, buffer, servers)
    return float(
        gamma * idle_share(probabilities, servers)
        + service_rate * servers * rho * probabilities[-1]
    )


def critical_gamma(*, buffer: int, service_rate: float, servers: int = 1) -> float:
    """gamma(K, c), at which the minimiser of C is rho = 1: gamma(K) = mu (K + 2) / K
    when c = 1 (Lemma 1). In general C = gamma (1 - rho (1 - P_K)) + c mu rho P_K and
    rho dP_K/drho = P_K (K - E[X]), so dC/drho = 0 at rho = 1 gives
    gamma = c mu t / (1 - t), with t = P_K (K + 1 - E[X]) at rho = 1."""
    if servers == 1:
        return service_rate * (buffer + 2) / buffer
    check_servers(buffer=buffer, servers=servers)
    probabilities = stationary_probabilities(1.0, buffer, servers)
    mean = float(probabilities @ np.arange(buffer + 1))
    t = float(probabilities[-1]) * (buffer + 1 - mean)
    return servers * service_rate * t / (1.0 - t)


def optimal_traffic(*, gamma: float, buffer: int, service_rate: float, servers: int = 1) -> float:
    """rho(gamma, K), the unique minimiser of C (Lemma 1): in (0, 1) when gamma < gamma(K)
    = mu (K + 2) / K, 1 when equal, above 1 when greater. C is unimodal, so a
    golden-section search finds it; the roots of eq. (6) sit next to a double root at 1,
    where rounding hides their sign. With c servers the same holds with gamma(K, c) of
    `critical_gamma` (unimodality checked numerically, not proved).
    """
    critical = critical_gamma(buffer=buffer, service_rate=service_rate, servers=servers)
    if math.isclose(gamma, critical, rel_tol=1e-12):
        return 1.0

    def objective(rho: float) -> float:
        return cost(rho, gamma=gamma, buffer=buffer, service_rate=service_rate, servers=servers)

    if gamma < critical:
        low, high = 0.0, 1.0
    else:
        low, high = 1.0, 2.0
        while objective(high) < objective((1.0 + high) / 2):  # still falling: look further
            low, high = (1.0 + high) / 2, high * 2
    return golden_section_minimum(objective, low, high, tolerance=1e-12)


def golden_section_minimum(
    function: Callable[[float], float], low: float, high: float, *, tolerance: float
) -> float:
    """The minimiser of a unimodal function on [low, high], to within `tolerance` (relative
    where high is above 1, so that the bracket stays wider than a float's step): the
    bracket shrinks by the golden ratio each step, one new value a step. (Plain Python,
    so that sizing the pool in a crawl loads no SciPy.)"""
    shrink = (math.sqrt(5.0) - 1.0) / 2.0
    left, right = high - shrink * (high - low), low + shrink * (high - low)
    left_value, right_value = function(left), function(right)
    while high - low > tolerance * max(1.0, high):
        if left_value <= right_value:  # the minimum is not right of `right`
            high, right, right_value = right, left, left_value
            left = high - shrink * (high - low)
            left_value = function(left)
        else:
            low, left, left_value = left, right, right_value
            right = low + shrink * (high - low)
            right_value = function(right)
    return left if left_value <= right_value else right


@dataclass(frozen=True, slots=True)
class StaticPool:
    fetchers: int
    cost: float
    traffic: float  # rho of that pool, per server
    optimal_traffic: float  # rho(gamma, K), before rounding to whole fetchers


def optimal_fetchers(
    *, arrival_rate: float, service_rate: float, buffer: int, gamma: float, servers: int = 1
) -> StaticPool:
    """N(gamma, K): the better of the two whole pools around rho(gamma, K) c mu / lambda
    (Proposition 1), and never fewer than one fetcher."""
    check_queue(
        arrival_rate=arrival_rate,
        service_rate=service_rate,
        buffer=buffer,
        gamma=gamma,
        servers=servers,
    )
    capacity = servers * service_rate  # c mu: pages a second with every server busy
    best_rho = optimal_traffic(
        gamma=gamma, buffer=buffer, service_rate=service_rate, servers=servers
    )
    ideal = best_rho * capacity / arrival_rate
    candidates = {max(1, math.floor(ideal)), max(1, math.ceil(ideal))}

    def pool_cost(n: int) -> float:
        return cost(
            n * arrival_rate / capacity,
            gamma=gamma,
            buffer=buffer,
            service_rate=service_rate,
            servers=servers,
        )

    fetchers = min(sorted(candidates), key=pool_cost)
    return StaticPool(
        fetchers=fetchers,
        cost=pool_cost(fetchers),
        traffic=fetchers * arrival_rate / capacity,
        optimal_traffic=best_rho,
    )
