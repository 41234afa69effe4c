"""The paper's Table 1 and Figures 6-8 (Talim, Liu, Nain & Coffman) as known answers."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from policies.pool.fetcher_mdp import PoolModel, relative_value_iteration, solve_exactly
from policies.pool.mm1k import (
    cost,
    golden_section_minimum,
    optimal_fetchers,
    optimal_traffic,
    stationary_probabilities,
)

# lambda, K, gamma, C_s, N_s, C_d, N_min, N-bar; mu = 1. "1.13" is gamma(15) = 17/15.
TABLE_1 = [
    (0.01, 5, 0.4, 0.17541, 73, 0.16804, 57, 70.3),
    (0.01, 5, 1.4, 0.40000, 100, 0.38336, 86, 95.1),
    (0.01, 5, 2.4, 0.53834, 114, 0.51746, 101, 108.4),
    (0.01, 10, 0.4, 0.10207, 86, 0.09062, 60, 82.6),
    (0.01, 10, 1.2, 0.20000, 100, 0.17534, 77, 94.1),
    (0.01, 10, 2.4, 0.28347, 110, 0.24798, 88, 102.3),
    (0.01, 15, 0.4, 0.07177, 91, 0.05891, 58, 87.7),
    (0.01, 15, 17 / 15, 0.13333, 100, 0.10720, 70, 94.5),
    (0.01, 15, 2.4, 0.19192, 107, 0.15342, 78, 99.7),
    (0.05, 5, 0.4, 0.17578, 15, 0.15127, 7, 13.8),
    (0.05, 5, 1.4, 0.40000, 20, 0.34733, 12, 17.7),
    (0.05, 5, 2.4, 0.53841, 23, 0.46583, 15, 20.2),
    (0.05, 10, 0.4, 0.10220, 17, 0.08308, 5, 16.2),
    (0.05, 10, 1.2, 0.20000, 20, 0.14955, 8, 18.2),
    (0.05, 10, 2.4, 0.28347, 22, 0.20541, 10, 19.4),
    (0.05, 15, 0.4, 0.07184, 18, 0.05514, 4, 17.4),
    (0.05, 15, 17 / 15, 0.13333, 20, 0.09117, 6, 18.7),
    (0.05, 15, 2.4, 0.19372, 21, 0.13895, 8, 19.3),
    (0.1, 5, 0.4, 0.17600, 7, 0.15239, 1, 6.5),
    (0.1, 5, 1.4, 0.40000, 10, 0.32198, 4, 8.6),
    (0.1, 5, 2.4, 0.54067, 11, 0.44989, 5, 9.3),
    (0.1, 10, 0.4, 0.10403, 9, 0.06838, 0, 8.4),
    (0.1, 10, 1.2, 0.20000, 10, 0.13854, 2, 9.0),
    (0.1, 10, 2.4, 0.28347, 11, 0.18585, 3, 9.6),
    (0.1, 15, 0.4, 0.07184, 9, 0.05326, 0, 8.7),
    (0.1, 15, 17 / 15, 0.13333, 10, 0.08538, 1, 9.3),
    (0.1, 15, 2.4, 0.19458, 11, 0.09606, 1, 9.7),
]


@pytest.mark.parametrize(
    ("arrival", "buffer", "gamma", "static_cost", "static_n", "dynamic_cost", "n_min", "n_bar"),
    TABLE_1,
)
def test_table_1(
    arrival: float,
    buffer: int,
    gamma: float,
    static_cost: float,
    static_n: int,
    dynamic_cost: float,
    n_min: int,
    n_bar: float,
) -> None:
    pool = optimal_fetchers(arrival_rate=arrival, service_rate=1.0, buffer=buffer, gamma=gamma)
    assert pool.fetchers == static_n
    assert round(pool.cost, 5) == pytest.approx(static_cost, abs=1e-9)
    model = PoolModel(
        arrival_rate=arrival, service_rate=1.0, buffer=buffer, fetchers=static_n, gamma=gamma
    )
    policy = relative_value_iteration(model)
    assert policy.average_cost == pytest.approx(dynamic_cost, abs=1e-4)
    assert policy.min_active == n_min
    assert policy.mean_active == pytest.approx(n_bar, abs=0.1)


@pytest.mark.parametrize(
    ("gamma", "expected", "iterations"),
    [(1.0, 0.20907, 254), (1.4, 0.25924, 255), (2.0, 0.32211, 256)],
)
def test_figures_6_to_8(gamma: float, expected: float, iterations: int) -> None:
    model = PoolModel(arrival_rate=0.1, service_rate=1.0, buffer=5, fetchers=16, gamma=gamma)
    policy = relative_value_iteration(model)
    assert policy.average_cost == pytest.approx(expected, abs=1e-5)
    assert abs(policy.iterations - iterations) <= 1
    # the optimal policy is a monotone switching curve (Section 3): past a queue length,
    # never activate
    for event in (0, 1):
        for active in range(17):
            decisions = [
                policy.activate(q, active, event)
                for q in range(6)
                if model.feasible[model.index(q, active, event)]
            ]
            assert decisions == sorted(decisions, reverse=True)


@pytest.mark.parametrize(
    ("arrival", "buffer", "gamma", "fetchers"),
    [(0.1, 5, 1.4, 10), (0.05, 10, 0.4, 17), (0.1, 15, 2.4, 11)],
)
def test_value_iteration_agrees_with_the_linear_program(
    arrival: float, buffer: int, gamma: float, fetchers: int
) -> None:
    model = PoolModel(
        arrival_rate=arrival, service_rate=1.0, buffer=buffer, fetchers=fetchers, gamma=gamma
    )
    exact = solve_exactly(model)
    policy = relative_value_iteration(model, tolerance=1e-9)
    assert policy.average_cost == pytest.approx(exact, abs=1e-7)


def test_the_dynamic_policy_never_costs_more_than_the_static_one() -> None:
    for arrival, buffer, gamma, *_ in TABLE_1[::4]:
        pool = optimal_fetchers(arrival_rate=arrival, service_rate=1.0, buffer=buffer, gamma=gamma)
        model = PoolModel(
            arrival_rate=arrival,
            service_rate=1.0,
            buffer=buffer,
            fetchers=pool.fetchers,
            gamma=gamma,
        )
        assert relative_value_iteration(model).average_cost <= pool.cost + 1e-9


def test_the_cost_at_rho_1_and_gamma_k_are_as_the_paper_says() -> None:
    assert cost(1.0, gamma=0.5, buffer=4, service_rate=2.0) == pytest.approx(2.5 / 5)
    assert optimal_traffic(gamma=7 / 5, buffer=5, service_rate=1.0) == 1.0
    assert optimal_traffic(gamma=0.4, buffer=5, service_rate=1.0) < 1.0
    assert optimal_traffic(gamma=3.0, buffer=5, service_rate=1.0) > 1.0


@settings(max_examples=60, deadline=None)
@given(st.floats(0.01, 50), st.integers(2, 40))
def test_stationary_probabilities_sum_to_one_and_follow_rho(rho: float, buffer: int) -> None:
    probabilities = stationary_probabilities(rho, buffer)
    assert probabilities.sum() == pytest.approx(1.0)
    assert np.all(probabilities >= 0)
    assert probabilities[1] / probabilities[0] == pytest.approx(rho)


@settings(max_examples=40, deadline=None)
@given(st.floats(0.0, 1.0), st.floats(1.0, 1e9))
def test_the_golden_section_search_finds_the_minimum_at_any_scale(
    fraction: float, high: float
) -> None:
    """To 1e-12, relative above 1: a bracket of 1e9 ends, as one of 1 does."""
    target = fraction * high
    found = golden_section_minimum(lambda x: (x - target) ** 2, 0.0, high, tolerance=1e-12)
    assert abs(found - target) <= 1e-11 * max(1.0, high)


@settings(max_examples=40, deadline=None)
@given(st.floats(0.05, 20), st.integers(2, 30), st.floats(0.1, 10))
def test_the_optimal_traffic_beats_its_neighbours(gamma: float, buffer: int, mu: float) -> None:
    best = optimal_traffic(gamma=gamma, buffer=buffer, service_rate=mu)
    best_cost = cost(best, gamma=gamma, buffer=buffer, service_rate=mu)
    for other in (best * 0.97, best * 1.03, best / 2, best * 2):
        assert best_cost <= cost(other, gamma=gamma, buffer=buffer, service_rate=mu) + 1e-12


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"buffer": 1}, "the buffer K must hold at least 2 pages"),
        ({"arrival_rate": 0.0}, "the arrival rate must be a positive number"),
        ({"service_rate": -1.0}, "the service rate must be a positive number"),
        ({"gamma": math.nan}, "gamma must be a positive number"),
    ],
)
def test_bad_parameters_are_a_clear_error(values: dict[str, float], message: str) -> None:
    parameters = {"arrival_rate": 0.1, "service_rate": 1.0, "buffer": 5, "gamma": 1.0, **values}
    with pytest.raises(ValueError, match=message):
        optimal_fetchers(**parameters)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=message):
        PoolModel(fetchers=3, **parameters)  # type: ignore[arg-type]
