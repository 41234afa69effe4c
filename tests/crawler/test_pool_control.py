"""The pool control re-solves the pool policy as the estimates move, within its share of
the time."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from crawler.fetch.admission import Admission
from crawler.process.pool_control import SOLVER_SHARE, PoolControl
from crawler.telemetry.metrics import CrawlerMetrics
from policies.pool.fetcher_pool import DynamicPool, PoolSolution, StaticPool


class SlowPool(StaticPool):
    """The static optimum, each solve taking one second of a fake clock."""

    def __init__(self, clock: list[float], **settings: Any) -> None:
        super().__init__(**settings)
        self.clock, self.solves = clock, 0

    def solve(self, arrival_rate: float, service_rate: float) -> PoolSolution:
        self.solves += 1
        self.clock[0] += 1.0
        return super().solve(arrival_rate, service_rate)


def observe(control: PoolControl, *, fetch_seconds: float, service_seconds: float) -> None:
    for _ in range(200):
        control.arrival("a.test", fetch_seconds, queue=1, active=1)
        control.departure("a.test", service_seconds, queue=1, active=1)


async def test_a_solve_of_d_seconds_is_followed_by_none_for_d_over_the_solvers_share() -> None:
    clock = [0.0]
    pool = SlowPool(clock, max_fetchers=16, buffer=4)
    control = PoolControl(
        pool,
        CrawlerMetrics(CollectorRegistry(), version="test"),
        Admission(concurrency=16, target=16),
        buffer=4,
        clock=lambda: clock[0],
    )
    observe(control, fetch_seconds=0.1, service_seconds=0.01)
    control.refresh()
    assert control._solving is not None
    await control._solving
    assert pool.solves == 1
    wait = 1.0 / SOLVER_SHARE - 1.0  # after a solve of 1 s

    observe(control, fetch_seconds=0.1, service_seconds=0.05)  # mu moved five-fold
    services = control.services.overall
    assert pool.needs_solve(control.arrivals.overall.rate_, services.rate_)
    clock[0] = 1.0 + wait - 0.1
    control.refresh()
    assert control._solving is None
    assert pool.solves == 1

    clock[0] = 1.0 + wait
    control.refresh()
    assert control._solving is not None
    await control._solving
    assert pool.solves == 2
    assert pool.solved_for is not None
    assert pool.solved_for[1] == services.rate_


async def test_an_mdp_that_does_not_settle_is_said_once_and_the_static_optimum_stands_in(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A fetcher's page every ten seconds against a processor of thousands a second:
    relative value iteration crawls (it needs millions of steps), so the static optimum
    sizes the pool, and the log says so once, not at every solve."""
    clock = [0.0]
    pool = DynamicPool(max_fetchers=16, buffer=4, max_iterations=2_000)
    control = PoolControl(
        pool,
        CrawlerMetrics(CollectorRegistry(), version="test"),
        Admission(concurrency=16, target=16),
        buffer=4,
        clock=lambda: clock[0],
    )
    static = StaticPool(max_fetchers=16, buffer=4)
    with caplog.at_level(logging.WARNING, logger="crawler.process.pool_control"):
        for fetch_seconds in (10.0, 20.0):  # the rates move: a second solve
            observe(control, fetch_seconds=fetch_seconds, service_seconds=0.0005)
            clock[0] += 1_000.0  # past the solver's share of the time
            control.refresh()
            assert control._solving is not None
            await control._solving
            rates = control.arrivals.overall.rate_, control.services.overall.rate_
            assert pool.policy is None
            assert pool.target == min(static.solve(*rates).target, 16) == control.target
    warnings = [r for r in caplog.records if "did not settle" in r.getMessage()]
    assert len(warnings) == 1
