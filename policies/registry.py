"""Policies chosen by name from a registry of factories (as Gymnasium's `make`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from policies.frontier import BestFirst, BreadthFirst, PriorityFrontier
from policies.qlearning import QLearningFrontier

_FRONTIER_POLICIES: dict[str, Callable[..., PriorityFrontier]] = {}


def register_frontier_policy(name: str, factory: Callable[..., PriorityFrontier]) -> None:
    if name in _FRONTIER_POLICIES:
        raise ValueError(f"frontier policy {name!r} is already registered")
    _FRONTIER_POLICIES[name] = factory


def frontier_policy_names() -> list[str]:
    return sorted(_FRONTIER_POLICIES)


def make_frontier_policy(name: str, **kwargs: Any) -> PriorityFrontier:
    try:
        factory = _FRONTIER_POLICIES[name]
    except KeyError:
        known = ", ".join(frontier_policy_names())
        raise ValueError(f"unknown frontier policy {name!r} (known: {known})") from None
    return factory(**kwargs)


register_frontier_policy(BreadthFirst.name, BreadthFirst)
register_frontier_policy(BestFirst.name, BestFirst)
register_frontier_policy(QLearningFrontier.name, QLearningFrontier)
