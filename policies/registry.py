"""Every policy, of every kind, chosen by name from one registry of specs (as Gymnasium's
`registry` and `make`).

    kind        what it decides                              paper
    frontier    which URL the crawl fetches next             O'Meara & Patel; best-first
    pool        how many fetchers run at once                Talim et al.; the MDP paper
    revisit     which sources are visited again this period  the restless-bandit paper
    traversal   the order of a replayed crawl of a known graph (the frontier's, offline)

A spec carries the factory and what the rest of the crawler must know about the policy
(a frontier's refill order, whether it learns, a one-line summary): configuration checks,
the command line's choices and the conformance tests read it from here.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from policies.frontier.baselines import BestFirst, BreadthFirst
from policies.frontier.priority import PriorityFrontier
from policies.frontier.qlearning.frontier import QLearningFrontier
from policies.frontier.qlearning.settings import QLearningSettings
from policies.offline.traversals import make_orderer
from policies.pool.fetcher_pool import DynamicPool, FixedPool, LatencyPool, StaticPool
from policies.revisit.ephemeral import REVISIT_PRIORITIES

Kind = Literal["frontier", "pool", "revisit", "traversal"]
KINDS: tuple[Kind, ...] = ("frontier", "pool", "revisit", "traversal")


@dataclass(frozen=True, slots=True, kw_only=True)
class PolicySpec:
    kind: Kind
    name: str
    factory: Callable[..., Any]
    summary: str
    learns: bool = False  # keeps state that a checkpoint saves
    refill_order: str | None = None  # a frontier's: "depth", "score" or "priority"


_SPECS: dict[tuple[Kind, str], PolicySpec] = {}


def register(spec: PolicySpec) -> None:
    if spec.kind not in KINDS:
        raise ValueError(f"unknown policy kind {spec.kind!r} (known: {', '.join(KINDS)})")
    key = (spec.kind, spec.name)
    if key in _SPECS:
        raise ValueError(f"{spec.kind} policy {spec.name!r} is already registered")
    _SPECS[key] = spec


def names(kind: Kind) -> list[str]:
    """The policies of `kind`, in the order they were registered."""
    return [name for spec_kind, name in _SPECS if spec_kind == kind]


def spec(kind: Kind, name: str) -> PolicySpec:
    try:
        return _SPECS[(kind, name)]
    except KeyError:
        known = ", ".join(names(kind))
        raise ValueError(f"unknown {kind} policy {name!r} (known: {known})") from None


def make(kind: Kind, name: str, **settings: Any) -> Any:
    return spec(kind, name).factory(**settings)


def frontier_policy_names() -> list[str]:
    return names("frontier")


def make_frontier_policy(name: str, **settings: Any) -> PriorityFrontier:
    policy: PriorityFrontier = make("frontier", name, **settings)
    return policy


def register_frontier_policy(name: str, factory: Callable[..., PriorityFrontier]) -> None:
    register(
        PolicySpec(
            kind="frontier",
            name=name,
            factory=factory,
            summary=(factory.__doc__ or name).strip().splitlines()[0],
            refill_order=getattr(factory, "refill_order", "priority"),
        )
    )


def pool_policy_names() -> list[str]:
    return names("pool")


def make_pool_policy(name: str, **settings: Any) -> FixedPool:
    pool: FixedPool = make("pool", name, **settings)
    return pool


def _qlearning_frontier(**settings: Any) -> QLearningFrontier:
    """The Q-learning frontier of these `QLearningSettings` fields."""
    return QLearningFrontier(QLearningSettings(**settings))


for _frontier in (BestFirst, BreadthFirst):
    register_frontier_policy(_frontier.name, _frontier)
register(
    PolicySpec(
        kind="frontier",
        name=QLearningFrontier.name,
        factory=_qlearning_frontier,
        summary="Q-learning over link contexts (O'Meara & Patel, eq. 10)",
        learns=True,
        refill_order=QLearningFrontier.refill_order,
    )
)
for _pool, _summary in (
    (FixedPool, "a fixed number of fetchers: the concurrency"),
    (LatencyPool, "fetchers enough to keep the processor's queue fed at the latency seen"),
    (DynamicPool, "the MDP's policy: activate a fetcher or not at each event"),
    (StaticPool, "the M/M/1/K cost's optimum (Talim et al., eq. 4), re-solved as rates move"),
):
    register(PolicySpec(kind="pool", name=_pool.name, factory=_pool, summary=_summary))
for _name, _summary in (
    ("whittle", "Whittle indices of the restless bandit, within the budget"),
    ("greedy", "the sources with the most content expected, within the budget"),
    ("round-robin", "the sources longest unvisited first"),
):
    _priority = REVISIT_PRIORITIES[_name]
    register(PolicySpec(kind="revisit", name=_name, factory=_priority, summary=_summary))
for _name, _summary in (
    ("qlearning", "Q-learning (O'Meara & Patel): discoverer-keyed or link-context state"),
    ("best-first", "the link's estimated relevance first"),
    ("bfs", "breadth-first"),
    ("random", "a random order: the floor"),
):
    register(
        PolicySpec(
            kind="traversal",
            name=_name,
            factory=functools.partial(make_orderer, _name),
            summary=_summary,
            learns=_name == "qlearning",
        )
    )
