"""The crawler's models: pure, synchronous, no I/O. They are given the clock and events."""

from policies.ephemeral import Source, simulate, whittle_index, whittle_indices
from policies.fetcher_mdp import PoolModel, PoolPolicy, relative_value_iteration, solve_exactly
from policies.frontier import BestFirst, BreadthFirst, Candidate, LinkContext, PriorityFrontier
from policies.mm1k import StaticPool, optimal_fetchers, optimal_traffic
from policies.registry import (
    frontier_policy_names,
    make_frontier_policy,
    register_frontier_policy,
)
from policies.relevance import NotFittedError, TermCounter, TopicScorer, url_words

__all__ = [
    "BestFirst",
    "BreadthFirst",
    "Candidate",
    "LinkContext",
    "NotFittedError",
    "PoolModel",
    "PoolPolicy",
    "PriorityFrontier",
    "Source",
    "StaticPool",
    "TermCounter",
    "TopicScorer",
    "frontier_policy_names",
    "make_frontier_policy",
    "optimal_fetchers",
    "optimal_traffic",
    "register_frontier_policy",
    "relative_value_iteration",
    "simulate",
    "solve_exactly",
    "url_words",
    "whittle_index",
    "whittle_indices",
]
