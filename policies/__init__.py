"""The crawler's models: pure, synchronous, no I/O. They are given the clock and events.

The names below load their module on first use (PEP 562), so a process that needs one
light module (a worker counting terms: `policies.terms`) loads neither SciPy nor
scikit-learn.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from policies.frontier import BestFirst, BreadthFirst, Candidate, LinkContext, PriorityFrontier
    from policies.pool.fetcher_mdp import (
        PoolModel,
        PoolPolicy,
        relative_value_iteration,
        solve_exactly,
    )
    from policies.pool.mm1k import StaticPool, optimal_fetchers, optimal_traffic
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
    from policies.relevance import NotFittedError, TermCounter, TopicScorer
    from policies.relevance.labels import LabelModel
    from policies.revisit.ephemeral import Source, simulate, whittle_index, whittle_indices
    from policies.terms import link_text, url_words

_MODULES = {
    "revisit.ephemeral": ("Source", "simulate", "whittle_index", "whittle_indices"),
    "pool.fetcher_mdp": ("PoolModel", "PoolPolicy", "relative_value_iteration", "solve_exactly"),
    "frontier": ("BestFirst", "BreadthFirst", "Candidate", "LinkContext", "PriorityFrontier"),
    "relevance.labels": ("LabelModel",),
    "pool.mm1k": ("StaticPool", "optimal_fetchers", "optimal_traffic"),
    "registry": (
        "PolicySpec",
        "frontier_policy_names",
        "make",
        "make_frontier_policy",
        "make_pool_policy",
        "names",
        "pool_policy_names",
        "register",
        "register_frontier_policy",
        "spec",
    ),
    "relevance": ("NotFittedError", "TermCounter", "TopicScorer"),
    "terms": ("link_text", "url_words"),
}
_MODULE_OF = {name: module for module, members in _MODULES.items() for name in members}

__all__ = [
    "BestFirst",
    "BreadthFirst",
    "Candidate",
    "LabelModel",
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
    "link_text",
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


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'policies' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"policies.{module}"), name)
    globals()[name] = value  # looked up once
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
