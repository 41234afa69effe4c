"""Re-visiting sources of ephemeral content: the restless-bandit model and its Whittle index.

Avrachenkov & Borkar, "Whittle Index Policy for Crawling Ephemeral Content". Source i
publishes items at rate Lambda_i (Poisson), each worth xi_i on average when new, worth
decaying at rate mu_i. Every period T the crawler may crawl sources of total cost at most
M (C_i each). The state X_i is the worth waiting at source i: it grows as
X <- alpha X + u while the source is left alone and restarts from u once crawled, which
collects X (eq. 1-3), with u = Lambda xi / mu (1 - exp(-mu T)) and alpha = exp(-mu T).
In the stochastic model (eq. 19) a period adds U, the decayed worth of that period's
Poisson arrivals, instead of its mean u.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from policies.revisit.lspe import ThresholdLearner


@dataclass(frozen=True, slots=True)
class Source:
    xi: float  # mean worth of a new item
    mu: float  # interest decay rate
    arrival_rate: float  # Lambda: new items per unit of time
    cost: float = 1.0  # C: budget a crawl of the source takes

    def __post_init__(self) -> None:
        for name in ("xi", "mu", "arrival_rate", "cost"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"a source's {name} must be a positive number, got {value}")

    def alpha(self, period: float = 1.0) -> float:
        return math.exp(-self.mu * period)

    def u(self, period: float = 1.0) -> float:
        """The worth a period adds, in expectation (eq. 1)."""
        return self.arrival_rate * self.xi / self.mu * (1.0 - self.alpha(period))

    def u_star(self, period: float = 1.0) -> float:
        """The worth a never-crawled source tends to: u / (1 - alpha)."""
        return self.u(period) / (1.0 - self.alpha(period))


def whittle_indices(
    x: np.ndarray, *, alpha: np.ndarray, u: np.ndarray, cost: np.ndarray
) -> np.ndarray:
    """gamma(x) of Theorem 1 for many sources at once, defined for every x >= 0.

    Theorem 1's form is continuous in x (at the points where eta steps, both values of
    eta give the same gamma), so rounding in the ceiling cannot move it. At or above u*
    the formula gives 0; the index there is x, the worth a crawl would collect.
    """
    x = np.asarray(x, dtype=np.float64)
    ratio = (u - (1.0 - alpha) * x) / u
    below_star = ratio > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        steps = np.ceil(np.log(np.where(below_star, ratio, 1.0)) / np.log(alpha))
    eta = np.maximum(steps, 0.0)
    value = eta * ((1.0 - alpha) * x - u) + (1.0 - alpha**eta) / (1.0 - alpha) * u
    return np.where(below_star, value, x) / cost


def whittle_index(x: float, source: Source, period: float = 1.0) -> float:
    """gamma(x) of Theorem 1 for one source."""
    return float(
        whittle_indices(
            np.array([x]),
            alpha=np.array([source.alpha(period)]),
            u=np.array([source.u(period)]),
            cost=np.array([source.cost]),
        )[0]
    )


def period_arrivals(
    sources: list[Source], periods: int, rng: np.random.Generator, period: float = 1.0
) -> np.ndarray:
    """U of eq. (19) for every period and source (periods x sources): the decayed worth,
    at each period's end, of the items that arrived in it (Poisson, at uniform times;
    an item's worth when new is exponential with mean xi)."""
    added = np.zeros((periods, len(sources)))
    for column, source in enumerate(sources):
        counts = rng.poisson(source.arrival_rate * period, periods)
        total = int(counts.sum())
        worth = rng.exponential(source.xi, total) * np.exp(
            -source.mu * rng.uniform(0.0, period, total)
        )
        # sum each period's items: cut the flat list at the periods' boundaries
        sums = np.add.reduceat(worth, np.concatenate([[0], np.cumsum(counts)[:-1]]))
        added[:, column] = np.where(counts > 0, sums, 0.0) if total else 0.0
    return added


# -- policies ---------------------------------------------------------------------------
# Each ranks the sources; the crawler takes them in that order while the budget lasts.


def rank_whittle(
    estimates: np.ndarray, alpha: np.ndarray, u: np.ndarray, cost: np.ndarray, **_: object
) -> np.ndarray:
    """Highest Whittle index of the (estimated) state first (Theorem 1)."""
    return whittle_indices(estimates, alpha=alpha, u=u, cost=cost)


def rank_greedy(
    since_crawl: np.ndarray, alpha: np.ndarray, u: np.ndarray, **_: object
) -> np.ndarray:
    """Highest expected worth waiting first, from the time since each was last crawled:
    Lambda xi / mu (1 - exp(-mu k)) = u / (1 - alpha) (1 - alpha**k)."""
    return u / (1.0 - alpha) * (1.0 - alpha**since_crawl)


def rank_best(u: np.ndarray, **_: object) -> np.ndarray:
    """Always the sources with the largest u."""
    return u


def rank_round_robin(u: np.ndarray, period: int, **_: object) -> np.ndarray:
    """Each source in turn: the one whose turn it is first, then the ones after it."""
    return -((np.arange(u.size) - period) % u.size).astype(float)


RANKINGS: dict[str, Callable[..., np.ndarray]] = {
    "whittle": rank_whittle,
    "greedy": rank_greedy,
    "best": rank_best,
    "round-robin": rank_round_robin,
}


def choose(priorities: np.ndarray, cost: np.ndarray, budget: float) -> list[int]:
    """The sources to crawl: highest priority first while their costs fit the budget
    (ties go to the lower index)."""
    chosen, spent = [], 0.0
    for i in np.argsort(-np.asarray(priorities), kind="stable").tolist():
        if spent + cost[i] <= budget + 1e-12:
            chosen.append(i)
            spent += float(cost[i])
    return chosen


def _whittle_priority(
    *, expected: np.ndarray, alpha: np.ndarray, u: np.ndarray, cost: np.ndarray, **_: np.ndarray
) -> np.ndarray:
    return whittle_indices(expected, alpha=alpha, u=u, cost=cost)


def _greedy_priority(*, expected: np.ndarray, **_: np.ndarray) -> np.ndarray:
    return expected


def _round_robin_priority(*, since_visit: np.ndarray, **_: np.ndarray) -> np.ndarray:
    return np.asarray(since_visit, dtype=np.float64)


# each re-visit policy is its priority over sources (registered in `policies.registry`)
REVISIT_PRIORITIES: dict[str, Callable[..., np.ndarray]] = {
    "whittle": _whittle_priority,
    "greedy": _greedy_priority,
    "round-robin": _round_robin_priority,
}
REVISIT_POLICIES = tuple(REVISIT_PRIORITIES)


def plan_revisits(
    policy: str,
    *,
    arrival_rate: np.ndarray,
    xi: np.ndarray,
    mu: np.ndarray,
    cost: np.ndarray,
    since_visit: np.ndarray,
    budget: float,
) -> list[int]:
    """The sources to re-visit this period, from estimated parameters (all per period).

    The state of a source is not seen between visits; each policy works from its
    expectation, u / (1 - alpha) (1 - alpha**k) after k periods unvisited. Round robin
    takes the sources longest unvisited first, which is round robin for a set that grows.
    """
    if policy not in REVISIT_POLICIES:
        raise ValueError(f"unknown re-visit policy {policy!r} (known: {REVISIT_POLICIES})")
    alpha = np.exp(-mu)
    u = arrival_rate * xi / mu * (1.0 - alpha)
    expected = rank_greedy(since_crawl=since_visit, alpha=alpha, u=u)
    priority = REVISIT_PRIORITIES[policy]
    priorities = priority(expected=expected, alpha=alpha, u=u, cost=cost, since_visit=since_visit)
    return choose(priorities, cost, budget)


@dataclass(frozen=True)
class Simulation:
    average_reward: float
    rewards: np.ndarray  # collected per period
    crawls_per_source: list[int]


def simulate(
    sources: list[Source],
    *,
    budget: float,
    periods: int,
    policy: str,
    stochastic: bool = False,
    observe: str = "crawled",
    seed: int | None = None,
    start: str = "zero",
    believed: list[Source] | None = None,
) -> Simulation:
    """Run a policy for `periods` periods (T = 1) and average what it collected.

    Deterministic: eq. (2)-(3). Stochastic: eq. (19), where a period adds U rather than
    u; the policy sees the true states every period (`observe="all"`) or only what a
    crawl collects, and otherwise its own expectation (`observe="crawled"`).
    `lspe` learns its thresholds as it goes (`policies.revisit.lspe`), from the rewards alone.
    `believed`: the parameters the policy works from, when they are not the true ones
    (e.g. a crawler's estimates); the sources behave as `sources` say.
    """
    if policy not in RANKINGS and policy != "lspe":
        known = ", ".join(sorted([*RANKINGS, "lspe"]))
        raise ValueError(f"unknown policy {policy!r} (known: {known})")
    if observe not in ("crawled", "all"):
        raise ValueError(f"observe must be 'crawled' or 'all', got {observe!r}")
    if start not in ("zero", "u"):
        raise ValueError(f"start must be 'zero' or 'u', got {start!r}")
    if periods < 1 or budget <= 0:
        raise ValueError("periods and budget must be positive")
    if not sources:
        raise ValueError("there are no sources")
    believed = sources if believed is None else believed
    if len(believed) != len(sources):
        raise ValueError("believed must describe the same number of sources")
    rng = np.random.default_rng(seed)
    alpha = np.array([s.alpha() for s in sources])
    u = np.array([s.u() for s in sources])
    cost = np.array([s.cost for s in sources])
    # what the policy takes them to be
    alpha_b = np.array([s.alpha() for s in believed])
    u_b = np.array([s.u() for s in believed])
    state = np.zeros(len(sources)) if start == "zero" else u.copy()
    estimate = state.copy()
    since_crawl = (
        np.zeros(len(sources), dtype=np.int64)
        if start == "zero"
        else np.ones(len(sources), dtype=np.int64)
    )
    rewards = np.zeros(periods)
    crawls = [0] * len(sources)
    learner = ThresholdLearner(u_b, alpha_b) if policy == "lspe" else None
    # drawn up front, so every policy with the same seed meets the same arrivals
    arrivals = period_arrivals(sources, periods, rng) if stochastic else None
    for t in range(periods):
        seen = state if (observe == "all" or not stochastic) else estimate
        if learner is None:
            priorities = RANKINGS[policy](
                estimates=seen,
                since_crawl=since_crawl,
                alpha=alpha_b,
                u=u_b,
                cost=cost,
                period=t,
            )
        else:  # the sources drawn, those furthest above their thresholds first
            drawn = learner.draw(seen, rng)
            priorities = np.where(drawn, seen - learner.thresholds(seen), -np.inf)
        crawled = np.zeros(len(sources), dtype=bool)
        crawled[[i for i in choose(priorities, cost, budget) if priorities[i] > -np.inf]] = True
        rewards[t] = state[crawled].sum()
        for i in np.flatnonzero(crawled):
            crawls[i] += 1
        added = u if arrivals is None else arrivals[t]
        state = np.where(crawled, added, alpha * state + added)
        # the policy's expectation: a crawl saw the state, and the period adds u on average
        estimate = np.where(crawled, u_b, alpha_b * estimate + u_b)
        since_crawl = np.where(crawled, 1, since_crawl + 1)
        if learner is not None:
            seen_next = state if (observe == "all" or not stochastic) else estimate
            learner.learn(seen, crawled, rewards[t], seen_next)
    return Simulation(float(rewards.mean()), rewards, crawls)
