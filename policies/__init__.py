"""The crawler's models: pure, synchronous, no I/O. They are given the clock and events."""

from policies.frontier import BestFirst, BreadthFirst, Candidate, PriorityFrontier
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
    "NotFittedError",
    "PriorityFrontier",
    "TermCounter",
    "TopicScorer",
    "frontier_policy_names",
    "make_frontier_policy",
    "register_frontier_policy",
    "url_words",
]
