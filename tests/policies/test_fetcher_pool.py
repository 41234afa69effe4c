from __future__ import annotations

import pytest

from policies import make_pool_policy, pool_policy_names
from policies.pool.fetcher_mdp import ARRIVAL, DEPARTURE
from policies.pool.fetcher_pool import DynamicPool, StaticPool
from policies.pool.mm1k import optimal_fetchers


def test_fixed_keeps_its_size_whatever_happens() -> None:
    pool = make_pool_policy("fixed", max_fetchers=12, buffer=5)
    assert not pool.needs_solve(1.0, 1.0)
    assert pool.on_arrival(5, 12) == pool.on_departure(0, 3) == pool.target == 12


def test_mm1k_takes_the_static_optimum_within_its_maximum() -> None:
    pool = make_pool_policy("mm1k", max_fetchers=200, buffer=5, gamma=0.4)
    assert pool.needs_solve(0.01, 1.0)
    solution = pool.solve(0.01, 1.0)
    pool.adopt(solution)
    assert pool.target == 73
    assert solution.cost == pytest.approx(0.17541, abs=1e-5)
    assert not pool.needs_solve(0.0105, 1.02)  # within the 10% tolerance
    assert pool.needs_solve(0.012, 1.0)
    capped = make_pool_policy("mm1k", max_fetchers=50, buffer=5, gamma=0.4)
    capped.adopt(capped.solve(0.01, 1.0))
    assert capped.target == 50


def test_solutions_are_kept_by_grid_cell_and_solved_once() -> None:
    """Rates that stay in a cell, or come back to one, reuse its solution."""
    pool = make_pool_policy("mdp", max_fetchers=16, buffer=5, gamma=1.0)
    first = pool.solve(0.1, 1.0)
    pool.adopt(first)
    assert not pool.needs_solve(0.102, 0.99)
    assert pool.solve(0.102, 0.99) is first  # the same cell: no new solve
    moved = pool.solve(0.2, 1.0)
    assert moved is not first
    assert moved.cost != first.cost
    assert pool.solve(0.1, 1.0) is first  # back in the first cell


def test_mdp_applies_its_table_at_each_event() -> None:
    pool = make_pool_policy("mdp", max_fetchers=16, buffer=5, gamma=1.0)
    assert pool.on_arrival(2, 16) == 16  # before its first solution: all of them
    solution = pool.solve(0.1, 1.0)
    pool.adopt(solution)
    assert solution.policy is not None
    assert solution.cost == pytest.approx(0.20907, abs=1e-5)
    for queue in range(6):
        for active in range(1, 17):
            pool.target = active
            reactivate = solution.policy.activate(queue, active, ARRIVAL)
            assert pool.on_arrival(queue, active) == active - 1 + reactivate
            if queue > 0:
                pool.target = active
                more = solution.policy.activate(queue, active, DEPARTURE)
                assert pool.on_departure(queue, active) == min(16, active + more)
    # a short queue wants more fetchers, a full one fewer
    pool.target = 5
    assert pool.on_departure(1, 5) == 6
    pool.target = 16
    assert pool.on_arrival(5, 16) == 15


def test_mdp_counts_the_fetchers_it_activated_not_those_already_dispatched() -> None:
    pool = make_pool_policy("mdp", max_fetchers=16, buffer=5, gamma=1.0)
    pool.adopt(pool.solve(0.1, 1.0))
    pool.target = 8
    assert pool.on_departure(1, 8) == 9  # activate one more...
    # ...and a page arriving before the dispatcher started it does not undo that
    assert pool.on_arrival(1, 8) == 9


def test_unknown_pool_policies_name_the_known_ones() -> None:
    assert pool_policy_names() == ["fixed", "latency", "mdp", "mm1k"]
    with pytest.raises(ValueError, match=r"unknown pool policy 'auto' \(known: fixed, latency"):
        make_pool_policy("auto", max_fetchers=4, buffer=4)


def test_latency_feeds_the_processor_by_littles_law() -> None:
    pool = make_pool_policy("latency", max_fetchers=64, buffer=8)
    pool.adopt(pool.solve(4.0, 100.0))  # a fetch takes 0.25 s, a page 0.01 s to process
    assert pool.target == 25
    pool.adopt(pool.solve(1.0, 1000.0))
    assert pool.target == 64  # at most the configured concurrency


def test_gamma_defaults_to_the_critical_value_for_the_current_service_rate() -> None:
    pool = make_pool_policy("mm1k", max_fetchers=1000, buffer=8)
    solution = pool.solve(2.0, 100.0)
    assert solution.gamma == pytest.approx(100.0 * 10 / 8)
    assert solution.target == 50  # rho = 1: as fast as the processor works


def test_static_solution_matches_proposition_1() -> None:
    pool = make_pool_policy("mm1k", max_fetchers=1000, buffer=10, gamma=2.4)
    solution = pool.solve(0.05, 1.0)
    expected = optimal_fetchers(arrival_rate=0.05, service_rate=1.0, buffer=10, gamma=2.4)
    assert (solution.target, solution.cost) == (expected.fetchers, expected.cost)


def test_the_dynamic_policy_falls_back_to_the_static_optimum_where_it_does_not_settle() -> None:
    """A fetcher's page every 100 s against a processor of 10,000 a second (a polite
    crawl whose fetchers wait on slow hosts, beside a fast processor): relative value
    iteration would need millions of steps. The static optimum for the same rates sizes
    the pool instead, and says it does."""
    pool = DynamicPool(max_fetchers=16, buffer=16)  # the crawl's defaults
    solution = pool.solve(0.01, 10_000.0)
    assert solution.fallback
    assert solution.policy is None
    static = StaticPool(max_fetchers=16, buffer=16).solve(0.01, 10_000.0)
    assert (solution.target, solution.cost) == (static.target, static.cost)
    pool.adopt(solution)
    assert pool.target == min(static.target, 16)
    assert pool.on_arrival(queue=0, active=1) == pool.target  # fixed until the next solve
    # rates within a few orders of magnitude of each other settle as before
    settled = pool.solve(100.0, 200.0)
    assert not settled.fallback
    assert settled.policy is not None
