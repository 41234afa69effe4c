"""Pool policies: how many fetches to run at once (Talim, Liu, Nain & Coffman).

A pool policy is told the estimated rates and the events of the processor's queue, and
answers with a target number of active fetchers, which the engine's dispatcher reads:
- `fixed`: always the configured number;
- `mm1k`: the static optimum of Proposition 1 for the current estimates (Section 2);
- `mdp`: the optimal dynamic policy of Section 3, applied at every arrival (activate
  the fetcher that just delivered again, or not) and every departure (activate one
  more, or not);
- `latency`: a rule of thumb in the spirit of Scrapy's AutoThrottle, for comparison:
  as many fetches in flight as keep the processor fed by Little's law, c mu / lambda
  (the processor's rate times a fetch's latency).
Solving is separate from adopting, so the engine can solve off its event loop. The
estimates are read on a grid of relative steps of `tolerance` (in log scale): a new
solution is wanted only when an estimate crosses into another cell, and solutions are
kept by cell, so rates that come back to a cell solved before cost no new solve.

The processor may be a pool of c workers (`servers`, default 1): the models are then
the paper's with c servers, M/M/c/K (`policies.pool.mm1k` and `policies.pool.fetcher_mdp` say how
the extension follows from the paper). mu is the rate of one worker (one over the time
a worker spends on a page), K counts the pages in the workers as well as those waiting,
and K >= c. With c = 1 everything is as in the paper.

In the product a page that meets a full queue is not lost: its fetcher holds it until
the processor frees a place (blocking after service; `full_queue = drop` restores the
paper's loss). The models are used as the paper states them, with the loss read as a
blocked arrival. The event is the same in both systems, an arrival that finds q = K, so
the cost gamma P(idle) + (rate of arrivals at a full queue) prices what the paper
prices; with blocking it is paid in a fetcher's waiting time instead of a request made
again. Where the two differ: a blocked page enters at the next departure, so the queue
stays full and the processor never idles while a page waits (with c workers, K >= c
keeps every worker busy while the queue is full), and a blocked fetcher fetches
nothing meanwhile. The model's idle probability therefore errs on the side of
idling, and its r counts the blocked fetchers as active.

In a polite crawl a visit may wait part-way for its host's turn (a redirect to a page of
the same host, a host whose delay has not run out); the paper's fetcher is either
active, delivering pages to the queue at rate lambda, or inactive, costing nothing. A
waiting visit delivers nothing, so it is an inactive fetcher of the model: it holds no
place in the target (the engine's admission counts it apart and gives its place to a
visit that can fetch), and its wait is left out of lambda's estimate (a fetcher's time
on a page runs from its dispatch to the page's arrival less the waiting). lambda stays
the rate of a fetcher that fetches, as in the paper, r active fetchers deliver r
lambda, and the politeness bound enters only through how many hosts are ready: the
target bounds the visits fetching, never the hosts waiting.

gamma is in the paper's units: idling the processor outright (all its workers) costs as
much as losing gamma pages a second. Left unset it is gamma(K) = mu (K + 2) / K for the
current mu (with c workers, `critical_gamma`'s gamma(K, c)), the value at which the
static optimum is rho = 1: fetch as fast as the processor works.
"""

from __future__ import annotations

import dataclasses
import math
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from policies.pool.fetcher_mdp import (
    ARRIVAL,
    DEPARTURE,
    PoolModel,
    PoolPolicy,
    relative_value_iteration,
)
from policies.pool.mm1k import check_servers, critical_gamma, optimal_fetchers

DEFAULT_TOLERANCE = 0.1  # the grid's relative step: re-solve when lambda or mu moves 10%
SOLUTIONS_KEPT = 64  # solutions kept by grid cell
# relative value iteration's steps before the dynamic policy gives up on a solve (about
# 4 s of a core at K = 16 and 16 fetchers): it settles within 80,000 while the rates are
# within four orders of magnitude of each other, and slows as they part (a fetcher's
# page a minute against a processor of hundreds a second)
MDP_MAX_ITERATIONS = 150_000


@dataclass(frozen=True)
class PoolSolution:
    """A pool policy solved for given rates."""

    arrival_rate: float
    service_rate: float
    target: int  # the fetchers to run (the static optimum; for the MDP, its maximum)
    cost: float  # the model's average cost of gamma * P(idle) + loss rate
    gamma: float  # the gamma it was solved with
    policy: PoolPolicy | None = None  # the MDP's table, for the dynamic policy
    # the dynamic policy's solve did not settle: this is the static optimum instead
    fallback: bool = False


class FixedPool:
    """The configured number of fetchers, whatever happens."""

    name = "fixed"

    def __init__(self, *, max_fetchers: int, **_ignored: Any) -> None:
        self.max_fetchers = max_fetchers
        self.target = max_fetchers
        self.solved_for: tuple[float, float] | None = None  # (lambda, mu) of the solution

    def needs_solve(self, arrival_rate: float, service_rate: float) -> bool:
        return False

    def solve(self, arrival_rate: float, service_rate: float) -> PoolSolution:
        return PoolSolution(arrival_rate, service_rate, self.max_fetchers, math.nan, math.nan)

    def adopt(self, solution: PoolSolution) -> None:
        self.solved_for = (solution.arrival_rate, solution.service_rate)
        self.target = max(1, min(solution.target, self.max_fetchers))

    def on_arrival(self, queue: int, active: int) -> int:
        return self.target

    def on_departure(self, queue: int, active: int) -> int:
        return self.target


class _ModelledPool(FixedPool):
    """Bookkeeping shared by the policies that solve a model of the queue."""

    def __init__(
        self,
        *,
        max_fetchers: int,
        buffer: int,
        gamma: float | None = None,
        tolerance: float = DEFAULT_TOLERANCE,
        servers: int = 1,
        **_ignored: Any,
    ) -> None:
        super().__init__(max_fetchers=max_fetchers)
        check_servers(buffer=buffer, servers=servers)
        self.buffer = buffer
        self.servers = servers  # c, the processor's workers
        self.gamma = gamma
        self.tolerance = tolerance
        self._solutions: OrderedDict[tuple[int, int], PoolSolution] = OrderedDict()

    def gamma_for(self, service_rate: float) -> float:
        if self.gamma is not None:
            return self.gamma
        return critical_gamma(buffer=self.buffer, service_rate=service_rate, servers=self.servers)

    def cell(self, arrival_rate: float, service_rate: float) -> tuple[int, int]:
        """The grid cell of the rates: steps of `tolerance`, relative."""
        step = math.log1p(self.tolerance)
        return round(math.log(arrival_rate) / step), round(math.log(service_rate) / step)

    def needs_solve(self, arrival_rate: float, service_rate: float) -> bool:
        if self.solved_for is None:
            return True
        return self.cell(arrival_rate, service_rate) != self.cell(*self.solved_for)

    def solve(self, arrival_rate: float, service_rate: float) -> PoolSolution:
        """The solution for the rates' cell: kept from before, or solved now."""
        cell = self.cell(arrival_rate, service_rate)
        solution = self._solutions.get(cell)
        if solution is None:
            solution = self._solve(arrival_rate, service_rate)
            self._solutions[cell] = solution
            if len(self._solutions) > SOLUTIONS_KEPT:
                self._solutions.popitem(last=False)
        else:
            self._solutions.move_to_end(cell)
        return solution

    def _solve(self, arrival_rate: float, service_rate: float) -> PoolSolution:
        raise NotImplementedError


class StaticPool(_ModelledPool):
    """The M/M/c/K optimum for the current estimates, at most `max_fetchers`."""

    name = "mm1k"

    def _solve(self, arrival_rate: float, service_rate: float) -> PoolSolution:
        return self._static(arrival_rate, service_rate)

    def _static(self, arrival_rate: float, service_rate: float) -> PoolSolution:
        gamma = self.gamma_for(service_rate)
        pool = optimal_fetchers(
            arrival_rate=arrival_rate,
            service_rate=service_rate,
            buffer=self.buffer,
            gamma=gamma,
            servers=self.servers,
        )
        return PoolSolution(arrival_rate, service_rate, pool.fetchers, pool.cost, gamma)


class LatencyPool(_ModelledPool):
    """c mu / lambda fetchers: the processor's rate times the mean fetch latency."""

    name = "latency"

    def _solve(self, arrival_rate: float, service_rate: float) -> PoolSolution:
        target = max(1, math.ceil(self.servers * service_rate / arrival_rate))
        return PoolSolution(arrival_rate, service_rate, target, math.nan, math.nan)


class DynamicPool(StaticPool):
    """The MDP's optimal policy over at most `max_fetchers`; until the first solution,
    all of them. Where relative value iteration does not settle within `max_iterations`
    steps, the static optimum for the same rates stands in (`fallback`), a fixed
    target, until the rates move to another cell."""

    name = "mdp"

    def __init__(self, *, max_iterations: int = MDP_MAX_ITERATIONS, **settings: Any) -> None:
        super().__init__(**settings)
        self.max_iterations = max_iterations
        self.policy: PoolPolicy | None = None

    def _solve(self, arrival_rate: float, service_rate: float) -> PoolSolution:
        gamma = self.gamma_for(service_rate)
        model = PoolModel(
            arrival_rate=arrival_rate,
            service_rate=service_rate,
            buffer=self.buffer,
            fetchers=self.max_fetchers,
            gamma=gamma,
            servers=self.servers,
        )
        try:
            policy = relative_value_iteration(model, max_iterations=self.max_iterations)
        except RuntimeError:  # did not settle
            static = self._static(arrival_rate, service_rate)
            return dataclasses.replace(static, fallback=True)
        return PoolSolution(
            arrival_rate, service_rate, self.max_fetchers, policy.average_cost, gamma, policy
        )

    def adopt(self, solution: PoolSolution) -> None:
        self.solved_for = (solution.arrival_rate, solution.service_rate)
        self.policy = solution.policy
        if solution.policy is None:  # the static optimum stands in
            self.target = max(1, min(solution.target, self.max_fetchers))

    # The model's r is the number of fetchers the policy has activated: its own target,
    # not the visits in flight, which lag behind it until the dispatcher catches up
    # (stepping from those would undo every activation not yet dispatched).

    def on_arrival(self, queue: int, active: int) -> int:
        """A fetcher delivered a page to a queue of `queue` pages: re-activate it or not."""
        if self.policy is None:
            return self.target
        reactivate = self.policy.activate(queue, self.target, ARRIVAL)
        self.target = max(0, self.target - 1 + int(reactivate))
        return self.target

    def on_departure(self, queue: int, active: int) -> int:
        """The processor finished a page (`queue` counted it): one more fetcher or not."""
        if self.policy is None:
            return self.target
        more = self.policy.activate(queue, self.target, DEPARTURE)
        self.target = min(self.max_fetchers, self.target + int(more))
        return self.target
