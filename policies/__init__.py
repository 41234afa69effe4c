"""The crawler's models: pure, synchronous, no I/O. They are given the clock and events."""

from policies.ephemeral import Source, simulate, whittle_index, whittle_indices
from policies.fetcher_mdp import PoolModel, PoolPolicy, relative_value_iteration, solve_exactly
from policies.frontier import BestFirst, BreadthFirst, Candidate, LinkContext, PriorityFrontier
from policies.mm1k import StaticPool, optimal_fetchers, optimal_traffic
from policies.registry import (
    PolicySpec,
    frontier_policy_names,
    make,
    make_frontier_policy,
    make_pool_policy,
    names,
    pool_policy_names,
    register,
    register_frontier_policy,
    spec,
)
from policies.relevance import NotFittedError, TermCounter, TopicScorer, url_words

__all__ = [
    "BestFirst",
    "BreadthFirst",
    "Candidate",
    "LinkContext",
    "NotFittedError",
    "PolicySpec",
    "PoolModel",
    "PoolPolicy",
    "PriorityFrontier",
    "Source",
    "StaticPool",
    "TermCounter",
    "TopicScorer",
    "frontier_policy_names",
    "make",
    "make_frontier_policy",
    "make_pool_policy",
    "names",
    "optimal_fetchers",
    "optimal_traffic",
    "pool_policy_names",
    "register",
    "register_frontier_policy",
    "relative_value_iteration",
    "simulate",
    "solve_exactly",
    "spec",
    "url_words",
    "whittle_index",
    "whittle_indices",
]
