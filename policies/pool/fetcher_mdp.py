"""The dynamic fetcher pool: a Markov decision process over (queue, active fetchers, event).

Talim, Liu, Nain & Coffman, Section 3. At every arrival (a fetcher delivers a page and
goes idle) and every departure (the processor finishes a page) the controller may
activate one more fetcher or not. Uniformised at rate nu = lambda N + mu, the states are
(q, r, s): q pages queued, r fetchers active, s the event (0 departure, 1 arrival,
2 fictitious). The action first moves (q, r) to a post-decision pair: after a departure
(q - 1, min(r + a, N)), after an arrival (min(q + 1, K), r - 1 + a), after a fictitious
event unchanged; the next event is drawn with that pair's rates. Cost per step:
gamma 1(q = 0) + nu 1(q = K, s = 1), so the average cost is gamma P(idle) + loss rate.
Eq. (19)-(20) as printed use the pre-action r, flip a sign and write min{q+1, N} for
min{q+1, K}; this is the reading that reproduces the paper's Table 1.

A processor of c workers (`servers`, M/M/c/K) changes the model in two places, the
service rate and the starvation cost, and nowhere else. q is the pages in the system
(waiting or in service), so min(q, c) workers are busy and pages leave at rate
min(q, c) mu: the birth-death chain of `policies.pool.mm1k` with the fetchers' births lambda r.
Uniformisation needs a rate no smaller than any state's total, so nu = lambda N + c mu;
the next event of a post-decision pair (q', r') is a departure with probability
min(q', c) mu / nu, an arrival with lambda r' / nu, fictitious the rest. The starvation cost
gamma 1(q = 0) becomes gamma times the idle share (c - min(q, c)) / c: the decision
epochs are a Poisson process of rate nu, so their average is the time average (PASTA),
the static model's gamma E[c - min(X, c)] / c. The loss term and its proof (eq. 25) are
unchanged. Actions, feasible states and the forced activation in (1, 0, 0) stay as they
are: a departure that empties the queue with no fetcher active would still reach the
absorbing (0, 0, 2). With c = 1 every array is as above (the paper's), bit for bit.

Solved by relative value iteration (Proposition 4), and exactly by a linear program
over state-action frequencies, which checks it. Each state has three successors, one an
event, so an expected next value is three gathers from the value array: the iteration
needs NumPy alone, and SciPy (some 36 MB resident) is loaded only for what a crawl never
asks, the stationary distribution and the linear program.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from policies.pool.mm1k import check_queue

if TYPE_CHECKING:
    import scipy.sparse as sp

DEPARTURE, ARRIVAL, FICTITIOUS = 0, 1, 2
KEEP, ACTIVATE = 0, 1
DEFAULT_TAU = 0.99999  # the aperiodicity weight of Proposition 4
DEFAULT_TOLERANCE = 1e-5  # stop when no value moves by more than this, relatively
DEFAULT_MAX_ITERATIONS = 1_000_000


class PoolModel:
    """The MDP's states, feasible actions, costs and transitions, as arrays."""

    def __init__(
        self,
        *,
        arrival_rate: float,
        service_rate: float,
        buffer: int,
        fetchers: int,
        gamma: float,
        servers: int = 1,
    ) -> None:
        check_queue(
            arrival_rate=arrival_rate,
            service_rate=service_rate,
            buffer=buffer,
            gamma=gamma,
            servers=servers,
        )
        if fetchers < 1:
            raise ValueError(f"at least one fetcher must be available, got {fetchers}")
        self.arrival_rate = arrival_rate  # lambda, per active fetcher
        self.service_rate = service_rate  # mu, per server
        self.servers = servers  # c, the processor's workers
        self.buffer = buffer  # K
        self.fetchers = fetchers  # N, the most that may be active
        self.gamma = gamma
        k, n = buffer, fetchers
        grid = np.meshgrid(np.arange(k + 1), np.arange(n + 1), np.arange(3), indexing="ij")
        q, r, s = (axis.ravel() for axis in grid)
        self.q, self.r, self.s = q, r, s
        self.feasible = ~(
            ((s == DEPARTURE) & (q == 0))
            | ((s == ARRIVAL) & (r == 0))
            | ((s == FICTITIOUS) & (q == 0) & (r == 0))
        )
        allowed = np.ones((q.size, 2), dtype=bool)
        allowed[s == FICTITIOUS, ACTIVATE] = False
        allowed[(q == 1) & (r == 0) & (s == DEPARTURE), KEEP] = False  # never strand the pool
        self.allowed = allowed & self.feasible[:, None]
        c = servers
        self.nu = arrival_rate * n + service_rate * c
        idle = (c - np.minimum(q, c)) / c  # the idle share; 1(q = 0) when c = 1
        self.cost = gamma * idle + self.nu * ((q == k) & (s == ARRIVAL))
        # the post-decision pair of each state and action
        post_q = np.empty((q.size, 2), dtype=np.int64)
        post_r = np.empty((q.size, 2), dtype=np.int64)
        for action in (KEEP, ACTIVATE):
            post_q[:, action] = np.select(
                [s == DEPARTURE, s == ARRIVAL], [q - 1, np.minimum(q + 1, k)], q
            )
            post_r[:, action] = np.select(
                [s == DEPARTURE, s == ARRIVAL], [np.minimum(r + action, n), r - 1 + action], r
            )
        post_q = np.clip(post_q, 0, k)  # only infeasible states leave the range
        post_r = np.clip(post_r, 0, n)
        p_departure = service_rate * np.minimum(post_q, c) / self.nu  # min(q', c) mu / nu
        p_arrival = arrival_rate * post_r / self.nu
        # next[x, a, e]: the state after action a in x and then event e; probability alike
        self.next = ((post_q * (n + 1) + post_r) * 3)[:, :, None] + np.arange(3)
        self.probability = np.stack(
            [p_departure, p_arrival, 1.0 - p_departure - p_arrival], axis=-1
        )

    def index(self, q: int, r: int, s: int) -> int:
        return (q * (self.fetchers + 1) + r) * 3 + s

    def expected_values(self, h: np.ndarray, action: int) -> np.ndarray:
        """sum over x' of p(x' | x, action) h(x'), for every state, allowed or not."""
        successors, weights = self.by_action[action]
        # summed in the order of the events, as a sparse matrix's row would be
        return (
            weights[0] * h[successors[0]]
            + weights[1] * h[successors[1]]
            + weights[2] * h[successors[2]]
        )

    def action_values(self, h: np.ndarray) -> np.ndarray:
        """The expected next value of every state and action; inf if not allowed."""
        values = np.column_stack([self.expected_values(h, action) for action in (KEEP, ACTIVATE)])
        return np.where(self.allowed, values, np.inf)

    @functools.cached_property
    def by_action(self) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
        """For always KEEP and always ACTIVATE: each event's successor and its probability
        per state, as contiguous rows (three gathers make an expected value)."""
        return tuple(
            (
                np.ascontiguousarray(self.next[:, action, :].T),
                np.ascontiguousarray(self.probability[:, action, :].T),
            )
            for action in (KEEP, ACTIVATE)
        )

    def transition_matrix(self, policy: np.ndarray) -> sp.csr_matrix:
        import scipy.sparse as sp  # imported here: a crawl never needs it

        rows = np.repeat(np.arange(self.q.size), 3)
        chosen = np.arange(self.q.size)
        columns = self.next[chosen, policy].ravel()
        weights = self.probability[chosen, policy].ravel()
        return sp.csr_matrix((weights, (rows, columns)), shape=(self.q.size,) * 2)


@dataclass(frozen=True)
class PoolPolicy:
    """A solved pool: what to do in each state, and what it costs."""

    model: PoolModel
    actions: np.ndarray  # ACTIVATE or KEEP per state index (KEEP where infeasible)
    average_cost: float
    iterations: int
    start: int  # the state the chain starts from: the reference state

    @functools.cached_property
    def stationary(self) -> np.ndarray:
        """The long-run fraction of decision epochs in each state."""
        return stationary_distribution(self.model, self.actions, start=self.start)

    def activate(self, queue: int, active: int, event: int) -> bool:
        """Whether to activate one more fetcher at this event (queue, active: before it)."""
        queue = min(max(queue, 0), self.model.buffer)
        active = min(max(active, 0), self.model.fetchers)
        return bool(self.actions[self.model.index(queue, active, event)] == ACTIVATE)

    @property
    def min_active(self) -> int:
        """The fewest fetchers active, over the states the policy keeps visiting."""
        return int(self.model.r[self.stationary > 1e-12].min())

    @property
    def mean_active(self) -> float:
        return float(self.stationary @ self.model.r)


def greedy_actions(model: PoolModel, h: np.ndarray) -> np.ndarray:
    """The action minimising the expected next value; KEEP on ties (less traffic)."""
    values = model.action_values(h)
    keep, activate = values[:, KEEP], values[:, ACTIVATE]
    keep_finite = np.where(np.isfinite(keep), keep, 0.0)
    tolerance = 1e-12 * np.maximum(1.0, np.abs(keep_finite))
    better = np.isfinite(activate) & (~np.isfinite(keep) | (activate < keep_finite - tolerance))
    return np.where(better, ACTIVATE, KEEP)


def relative_value_iteration(
    model: PoolModel,
    *,
    reference: tuple[int, int, int] = (1, 1, 1),
    tau: float = DEFAULT_TAU,
    tolerance: float = DEFAULT_TOLERANCE,
    max_iterations: int = DEFAULT_MAX_ITERATIONS,
) -> PoolPolicy:
    """Proposition 4: h <- (1 - tau) h + tau (T h - T h(x_ref)) until it settles."""
    reference_index = model.index(*reference)
    if not model.feasible[reference_index]:
        raise ValueError(f"the reference state {reference} is not a state of the model")
    # inf where an action is not allowed; infeasible states are pinned at 0
    keep_mask = np.where(model.allowed[:, KEEP], 0.0, np.inf)
    activate_mask = np.where(model.allowed[:, ACTIVATE], 0.0, np.inf)
    infeasible = ~model.feasible
    h = np.zeros(model.q.size)
    for iteration in range(1, max_iterations + 1):
        best = np.minimum(
            model.expected_values(h, KEEP) + keep_mask,
            model.expected_values(h, ACTIVATE) + activate_mask,
        )
        backed_up = model.cost + best
        backed_up[infeasible] = 0.0
        updated = (1.0 - tau) * h + tau * (backed_up - backed_up[reference_index])
        updated[infeasible] = 0.0
        # the paper's rule, max |h' - h| / |h| < tolerance, over the states where h != 0
        settled = iteration > 1 and bool(np.all(np.abs(updated - h) <= tolerance * np.abs(h)))
        h = updated
        if settled:
            break
    else:
        raise RuntimeError(f"relative value iteration did not settle in {max_iterations} steps")
    actions = greedy_actions(model, h)
    average_cost = float(
        model.cost[reference_index] + model.action_values(h)[reference_index].min()
    )
    return PoolPolicy(model, actions, average_cost, iteration, reference_index)


def stationary_distribution(model: PoolModel, actions: np.ndarray, *, start: int) -> np.ndarray:
    """The long-run distribution of the chain the policy makes, from `start`."""
    import scipy.sparse as sp  # imported here: a crawl never needs it
    from scipy.sparse.linalg import spsolve

    matrix = model.transition_matrix(actions)
    reached = np.zeros(model.q.size, dtype=bool)
    reached[start] = True
    frontier = np.array([start])
    while frontier.size:
        successors = np.unique(matrix[frontier].indices)
        frontier = successors[~reached[successors]]
        reached[frontier] = True
    states = np.flatnonzero(reached)
    sub = matrix[states][:, states]
    # solve pi (P - I) = 0 with sum(pi) = 1, replacing one balance equation by the sum
    system = (sub.T - sp.identity(states.size)).tolil()
    system[0, :] = 1.0
    right = np.zeros(states.size)
    right[0] = 1.0
    solution = np.clip(spsolve(system.tocsr(), right), 0.0, None)
    distribution = np.zeros(model.q.size)
    distribution[states] = solution / solution.sum()
    return distribution


def solve_exactly(model: PoolModel) -> float:
    """The optimal average cost by linear programming over state-action frequencies
    (the MDP is communicating, so one constant gain is optimal from every state)."""
    import scipy.sparse as sp  # imported here: a crawl never needs it
    from scipy.optimize import linprog

    states, actions = np.nonzero(model.allowed)
    count = states.size
    rows = model.next[states, actions].ravel()
    columns = np.repeat(np.arange(count), 3)
    inflow = sp.csr_matrix(
        (model.probability[states, actions].ravel(), (rows, columns)),
        shape=(model.q.size, count),
    )
    outflow = sp.csr_matrix(
        (np.ones(count), (states, np.arange(count))), shape=(model.q.size, count)
    )
    balance = (outflow - inflow)[np.flatnonzero(model.feasible)]
    equalities = sp.vstack([balance, sp.csr_matrix(np.ones((1, count)))]).tocsr()
    right = np.zeros(equalities.shape[0])
    right[-1] = 1.0
    result = linprog(
        model.cost[states], A_eq=equalities, b_eq=right, bounds=(0, None), method="highs"
    )
    if not result.success:
        raise RuntimeError(f"the linear program failed: {result.message}")
    return float(result.fun)
