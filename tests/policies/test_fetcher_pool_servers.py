"""The pool models with a processor of c servers (M/M/c/K): c = 1 is the paper's model,
the stationary law is the textbook one, and the optimal pools grow with c."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from policies import make_pool_policy
from policies.pool.fetcher_mdp import (
    ACTIVATE,
    ARRIVAL,
    DEPARTURE,
    KEEP,
    PoolModel,
    PoolPolicy,
    relative_value_iteration,
    solve_exactly,
    stationary_distribution,
)
from policies.pool.mm1k import (
    cost,
    critical_gamma,
    idle_share,
    optimal_fetchers,
    optimal_traffic,
    stationary_probabilities,
)


def birth_death_by_generator(
    births: float, service_rate: float, buffer: int, servers: int
) -> np.ndarray:
    """The stationary law of the queue by brute force: pi Q = 0, sum(pi) = 1, from the
    CTMC's generator (births at a constant rate, deaths at min(i, c) mu)."""
    generator = np.zeros((buffer + 1, buffer + 1))
    for i in range(buffer + 1):
        if i < buffer:
            generator[i, i + 1] = births
        if i > 0:
            generator[i, i - 1] = min(i, servers) * service_rate
        generator[i, i] = -generator[i].sum()
    system = np.vstack([generator.T, np.ones(buffer + 1)])
    right = np.zeros(buffer + 2)
    right[-1] = 1.0
    solution, *_ = np.linalg.lstsq(system, right, rcond=None)
    return solution


def erlang_b(servers: int, offered: float) -> float:
    """The Erlang loss formula by its recursion B(k) = a B(k-1) / (k + a B(k-1))."""
    blocking = 1.0
    for k in range(1, servers + 1):
        blocking = offered * blocking / (k + offered * blocking)
    return blocking


def erlang_c(servers: int, offered: float) -> float:
    """P(wait) in the M/M/c queue with an unbounded buffer (a < c)."""
    head = sum(offered**k / math.factorial(k) for k in range(servers))
    tail = offered**servers / math.factorial(servers) * servers / (servers - offered)
    return tail / (head + tail)


# c = 1: the paper's closed forms


@settings(max_examples=60, deadline=None)
@given(st.floats(0.01, 20), st.integers(2, 40), st.floats(0.05, 10), st.floats(0.1, 10))
def test_one_server_is_the_papers_m_m_1_k(rho: float, buffer: int, gamma: float, mu: float) -> None:
    if math.isclose(rho, 1.0, rel_tol=1e-6):
        rho = 1.01  # eq. (3) and (4) are 0 / 0 there
    closed_form = (1 - rho) * rho ** np.arange(buffer + 1) / (1 - rho ** (buffer + 1))  # eq. 3
    probabilities = stationary_probabilities(rho, buffer, servers=1)
    assert probabilities == pytest.approx(closed_form, rel=1e-9, abs=1e-300)
    assert probabilities == pytest.approx(birth_death_by_generator(rho * mu, mu, buffer, 1))
    eq_4 = (1 - rho) * (gamma + mu * rho ** (buffer + 1)) / (1 - rho ** (buffer + 1))
    assert cost(rho, gamma=gamma, buffer=buffer, service_rate=mu, servers=1) == pytest.approx(
        eq_4, rel=1e-9
    )
    assert idle_share(probabilities, 1) == probabilities[0]
    assert critical_gamma(buffer=buffer, service_rate=mu, servers=1) == mu * (buffer + 2) / buffer


@pytest.mark.parametrize(
    ("arrival", "buffer", "gamma", "static_cost", "static_n"),
    [(0.01, 5, 0.4, 0.17541, 73), (0.05, 10, 2.4, 0.28347, 22), (0.1, 15, 17 / 15, 0.13333, 10)],
)
def test_one_server_reproduces_table_1(
    arrival: float, buffer: int, gamma: float, static_cost: float, static_n: int
) -> None:
    pool = optimal_fetchers(
        arrival_rate=arrival, service_rate=1.0, buffer=buffer, gamma=gamma, servers=1
    )
    assert (pool.fetchers, round(pool.cost, 5)) == (static_n, static_cost)
    assert pool == optimal_fetchers(
        arrival_rate=arrival, service_rate=1.0, buffer=buffer, gamma=gamma
    )


def test_one_server_mdp_is_the_papers_bit_for_bit() -> None:
    settings = {"arrival_rate": 0.1, "service_rate": 1.0, "buffer": 5, "fetchers": 16}
    paper = PoolModel(gamma=1.0, **settings)
    explicit = PoolModel(gamma=1.0, servers=1, **settings)
    assert explicit.nu == paper.nu == 0.1 * 16 + 1.0
    assert np.array_equal(explicit.cost, paper.cost)
    assert np.array_equal(explicit.probability, paper.probability)
    policy = relative_value_iteration(explicit)
    assert policy.average_cost == pytest.approx(0.20907, abs=1e-5)  # Figure 6
    assert abs(policy.iterations - 254) <= 1


# the M/M/c/K stationary law against textbook forms and the generator


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 12), st.integers(0, 30), st.floats(0.02, 8), st.floats(0.1, 10))
def test_stationary_law_solves_the_generator(
    servers: int, waiting: int, rho: float, mu: float
) -> None:
    buffer = max(2, servers + waiting)
    probabilities = stationary_probabilities(rho, buffer, servers)
    brute_force = birth_death_by_generator(servers * mu * rho, mu, buffer, servers)
    assert probabilities.sum() == pytest.approx(1.0)
    assert probabilities == pytest.approx(brute_force, rel=1e-7, abs=1e-12)
    # flow balance: pages served = pages admitted, so the idle share is 1 - rho (1 - P_K)
    assert idle_share(probabilities, servers) == pytest.approx(
        1 - rho * (1 - probabilities[-1]), abs=1e-12
    )


@pytest.mark.parametrize(
    ("servers", "offered"), [(2, 1.0), (2, 2.0), (5, 3.0), (10, 5.0), (20, 15.0), (40, 60.0)]
)
def test_no_waiting_room_is_the_erlang_loss_system(servers: int, offered: float) -> None:
    probabilities = stationary_probabilities(offered / servers, servers, servers)
    assert probabilities[-1] == pytest.approx(erlang_b(servers, offered), rel=1e-12)
    weights = [offered**k / math.factorial(k) for k in range(servers + 1)]  # truncated Poisson
    assert probabilities == pytest.approx(np.array(weights) / sum(weights), rel=1e-12)


def test_erlang_b_against_a_published_table_value() -> None:
    # 10 servers offered 5 erlangs block 1.84% of calls
    assert stationary_probabilities(0.5, 10, 10)[-1] == pytest.approx(0.018385, abs=1e-6)
    assert stationary_probabilities(1.0, 2, 2)[-1] == pytest.approx(0.4)  # (2^2 / 2) / 5


@pytest.mark.parametrize(("servers", "rho"), [(2, 0.5), (4, 0.8), (16, 0.9)])
def test_a_long_buffer_is_the_m_m_c_queue_of_erlang_c(servers: int, rho: float) -> None:
    probabilities = stationary_probabilities(rho, servers + 2000, servers)
    waiting = probabilities[servers:].sum()  # every server busy: an arrival would wait
    assert waiting == pytest.approx(erlang_c(servers, servers * rho), rel=1e-9)


# the static optimum with c servers


@pytest.mark.parametrize(("servers", "buffer"), [(2, 5), (4, 6), (4, 16), (8, 8), (16, 40)])
def test_the_critical_gamma_puts_the_optimum_at_rho_1(servers: int, buffer: int) -> None:
    mu = 3.0
    critical = critical_gamma(buffer=buffer, service_rate=mu, servers=servers)

    def at(rho: float, gamma: float = critical) -> float:
        return cost(rho, gamma=gamma, buffer=buffer, service_rate=mu, servers=servers)

    # not through optimal_traffic's shortcut: the cost itself is flat and least at 1
    assert (at(1.0 + 1e-5) - at(1.0 - 1e-5)) / 2e-5 == pytest.approx(0.0, abs=1e-6)
    assert at(1.0) < min(at(0.98), at(1.02))
    below = optimal_traffic(gamma=critical * 0.9, buffer=buffer, service_rate=mu, servers=servers)
    above = optimal_traffic(gamma=critical * 1.1, buffer=buffer, service_rate=mu, servers=servers)
    assert below < 1.0 < above
    pool = optimal_fetchers(
        arrival_rate=0.25, service_rate=mu, buffer=buffer, gamma=critical, servers=servers
    )
    assert pool.fetchers == servers * 12  # c mu / lambda: fetch as fast as the processor works


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 16), st.integers(0, 30), st.floats(0.05, 50), st.floats(0.2, 5))
def test_the_optimal_traffic_is_the_least_cost_on_a_fine_grid(
    servers: int, waiting: int, gamma: float, mu: float
) -> None:
    """Lemma 1 is proved for c = 1 only; the search assumes the cost is unimodal."""
    buffer = servers + waiting
    best = optimal_traffic(gamma=gamma, buffer=buffer, service_rate=mu, servers=servers)
    grid = np.exp(np.linspace(math.log(1e-3), math.log(max(4.0, 4 * best)), 2500))
    costs = [cost(r, gamma=gamma, buffer=buffer, service_rate=mu, servers=servers) for r in grid]
    least = cost(best, gamma=gamma, buffer=buffer, service_rate=mu, servers=servers)
    assert least <= min(costs) + 1e-12


@pytest.mark.parametrize("servers", [2, 4])
def test_more_weight_on_idling_never_means_fewer_fetchers(servers: int) -> None:
    """Proposition 2 with c servers: its proof needs only an idle share falling in rho."""
    fetchers = [
        optimal_fetchers(
            arrival_rate=0.05, service_rate=1.0, buffer=10, gamma=gamma, servers=servers
        ).fetchers
        for gamma in (0.1, 0.4, 1.0, 2.4, 5.0, 20.0)
    ]
    assert fetchers == sorted(fetchers)
    assert fetchers[0] < fetchers[-1]


@pytest.mark.parametrize(("arrival", "buffer", "gamma"), [(0.01, 5, 0.4), (0.05, 16, 2.4)])
def test_more_servers_take_more_fetchers(arrival: float, buffer: int, gamma: float) -> None:
    pools = [
        optimal_fetchers(
            arrival_rate=arrival, service_rate=1.0, buffer=buffer, gamma=gamma, servers=c
        )
        for c in range(1, 6)
    ]
    sizes = [pool.fetchers for pool in pools]
    assert sizes == sorted(sizes)
    assert len(set(sizes)) == len(sizes)
    # a whole pool at most one fetcher from the least-cost traffic, per server
    for c, pool in enumerate(pools, start=1):
        assert abs(pool.fetchers - pool.optimal_traffic * c / arrival) < 1


# the MDP with c servers


def always_activate(model: PoolModel) -> np.ndarray:
    return np.where(model.allowed[:, ACTIVATE], ACTIVATE, KEEP)


@pytest.mark.parametrize(
    ("arrival", "buffer", "fetchers", "servers"),
    [(0.1, 5, 30, 2), (0.3, 8, 12, 4), (0.05, 6, 90, 3)],
)
def test_the_static_policy_in_the_mdp_costs_what_the_m_m_c_k_says(
    arrival: float, buffer: int, fetchers: int, servers: int
) -> None:
    """Activating at every event keeps all N fetchers busy: the chain is then the static
    M/M/c/K queue, and the MDP's cost per step its cost per second (PASTA)."""
    gamma = 1.3
    model = PoolModel(
        arrival_rate=arrival,
        service_rate=1.0,
        buffer=buffer,
        fetchers=fetchers,
        gamma=gamma,
        servers=servers,
    )
    start = model.index(1, fetchers, ARRIVAL)
    stationary = stationary_distribution(model, always_activate(model), start=start)
    assert np.all(model.r[stationary > 1e-12] == fetchers)
    rho = fetchers * arrival / servers
    static = cost(rho, gamma=gamma, buffer=buffer, service_rate=1.0, servers=servers)
    assert float(stationary @ model.cost) == pytest.approx(static, rel=1e-9)


@pytest.mark.parametrize(
    ("arrival", "buffer", "gamma", "servers"),
    [(0.1, 5, 1.4, 2), (0.05, 10, 0.4, 3), (0.2, 6, 2.4, 4), (0.1, 4, 0.4, 4)],
)
def test_value_iteration_agrees_with_the_linear_program_with_c_servers(
    arrival: float, buffer: int, gamma: float, servers: int
) -> None:
    """As in Table 1, N = N_s: the dynamic policy can keep the static pool, so it costs
    no more."""
    static = optimal_fetchers(
        arrival_rate=arrival, service_rate=1.0, buffer=buffer, gamma=gamma, servers=servers
    )
    model = PoolModel(
        arrival_rate=arrival,
        service_rate=1.0,
        buffer=buffer,
        fetchers=static.fetchers,
        gamma=gamma,
        servers=servers,
    )
    policy = relative_value_iteration(model, tolerance=1e-9)
    assert policy.average_cost == pytest.approx(solve_exactly(model), abs=1e-7)
    assert policy.average_cost <= static.cost + 1e-9


def thresholds(policy: PoolPolicy, event: int) -> list[int]:
    """f_s(r): the longest queue at which the policy still activates (-1: never), per r;
    and a check that it is a switching curve (activate below it, never above)."""
    model = policy.model
    curve = []
    for active in range(model.fetchers + 1):
        queues = [
            q for q in range(model.buffer + 1) if model.feasible[model.index(q, active, event)]
        ]
        decisions = [policy.activate(q, active, event) for q in queues]
        assert decisions == sorted(decisions, reverse=True)
        curve.append(max((q for q, on in zip(queues, decisions, strict=True) if on), default=-1))
    return curve


@pytest.mark.parametrize(
    ("arrival", "buffer", "gamma"),
    [(0.1, 5, 1.4), (0.1, 8, 0.4), (0.05, 10, 2.4), (0.2, 6, None)],  # None: gamma(K, c)
)
def test_the_dynamic_pool_grows_with_the_servers(
    arrival: float, buffer: int, gamma: float | None
) -> None:
    """More servers drain the queue faster: with room to wait (K > c) and fetchers to
    spare, the switching curves move out (activate at longer queues), and the fewest
    and the mean active fetchers grow."""

    def gamma_for(servers: int) -> float:
        return gamma or critical_gamma(buffer=buffer, service_rate=1.0, servers=servers)

    most = optimal_fetchers(
        arrival_rate=arrival, service_rate=1.0, buffer=buffer, gamma=gamma_for(4), servers=4
    )
    fetchers = 2 * most.fetchers  # twice the static pool of the most servers: never binds
    solved = []
    for servers in range(1, 5):
        model = PoolModel(
            arrival_rate=arrival,
            service_rate=1.0,
            buffer=buffer,
            fetchers=fetchers,
            gamma=gamma_for(servers),
            servers=servers,
        )
        solved.append(relative_value_iteration(model))
    for fewer, more in itertools.pairwise(solved):
        for event in (DEPARTURE, ARRIVAL):
            assert all(
                a <= b
                for a, b in zip(thresholds(fewer, event), thresholds(more, event), strict=True)
            )
        assert fewer.min_active <= more.min_active
        assert fewer.mean_active < more.mean_active
    assert solved[-1].mean_active > 2 * solved[0].mean_active


# parameters and the pool policies


@pytest.mark.parametrize(
    ("servers", "buffer", "message"),
    [
        (0, 5, "the processor needs at least 1 server"),
        (6, 5, r"the buffer K \(5\) must hold at least as many pages as the processor has"),
    ],
)
def test_bad_servers_are_a_clear_error(servers: int, buffer: int, message: str) -> None:
    queue = {"arrival_rate": 0.1, "service_rate": 1.0, "buffer": buffer, "gamma": 1.0}
    with pytest.raises(ValueError, match=message):
        optimal_fetchers(servers=servers, **queue)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=message):
        PoolModel(fetchers=3, servers=servers, **queue)  # type: ignore[arg-type]
    for name in ("mm1k", "mdp", "latency"):
        with pytest.raises(ValueError, match=message):
            make_pool_policy(name, max_fetchers=8, buffer=buffer, servers=servers)
    assert make_pool_policy("fixed", max_fetchers=8, buffer=buffer, servers=servers).target == 8


def test_mm1k_sizes_for_the_servers_it_is_given() -> None:
    pool = make_pool_policy("mm1k", max_fetchers=1000, buffer=16, servers=4)
    solution = pool.solve(2.0, 100.0)
    assert solution.gamma == pytest.approx(critical_gamma(buffer=16, service_rate=100.0, servers=4))
    assert solution.target == 200  # rho = 1: c mu / lambda, as fast as four workers work
    pool = make_pool_policy("mm1k", max_fetchers=1000, buffer=10, gamma=2.4, servers=3)
    expected = optimal_fetchers(
        arrival_rate=0.05, service_rate=1.0, buffer=10, gamma=2.4, servers=3
    )
    assert (pool.solve(0.05, 1.0).target, pool.solve(0.05, 1.0).cost) == (
        expected.fetchers,
        expected.cost,
    )


def test_latency_feeds_every_server() -> None:
    pool = make_pool_policy("latency", max_fetchers=256, buffer=16, servers=4)
    pool.adopt(pool.solve(4.0, 100.0))
    assert pool.target == 100  # four workers at 100 pages/s, fetches of 0.25 s


def test_mdp_solves_the_model_with_its_servers() -> None:
    pool = make_pool_policy("mdp", max_fetchers=24, buffer=5, gamma=1.4, servers=2)
    solution = pool.solve(0.1, 1.0)
    assert solution.policy is not None
    assert solution.policy.model.servers == 2
    model = PoolModel(
        arrival_rate=0.1, service_rate=1.0, buffer=5, fetchers=24, gamma=1.4, servers=2
    )
    assert solution.cost == pytest.approx(relative_value_iteration(model).average_cost)
    one = make_pool_policy("mdp", max_fetchers=24, buffer=5, gamma=1.4).solve(0.1, 1.0)
    assert one.policy is not None
    assert one.policy.model.servers == 1
