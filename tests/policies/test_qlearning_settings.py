"""The Q-learning frontier's one settings object, and the convention that what it learns
is in attributes ending in `_`."""

from __future__ import annotations

from typing import Any

import pytest

from policies import Candidate, PriorityFrontier, make_frontier_policy
from policies.frontier.qlearning.frontier import QLearningFrontier
from policies.frontier.qlearning.settings import QLearningSettings


@pytest.mark.parametrize(
    ("field", "value", "rule"),
    [
        ("gamma", 1.0, "0 or more and below 1"),
        ("gamma", -0.1, "0 or more and below 1"),
        ("horizon", 0, "1 or more"),
        ("horizon", 2.5, "1 or more"),
        ("rerank_budget", 0, "1 or more"),
        ("subsidy_memory", 1.0, "0 or more and below 1"),
        ("patience", 1.5, "between 0 and 1, or None"),
        ("patient_after", -1, "0 or more"),
        ("relevant_at", 2, "between 0 and 1"),
        ("relevant_at", float("nan"), "between 0 and 1"),
        ("relative_levels", -1, "0 or more"),
        ("relatives_lowered_after", 0, "1 or more, or None"),
        ("relatives_kept_by_relevance", "yes", "True or False"),
    ],
)
def test_each_setting_out_of_range_is_named(field: str, value: Any, rule: str) -> None:
    with pytest.raises(ValueError, match=f"frontier's {field} is {rule}, not"):
        QLearningSettings(**{field: value})


def test_every_field_has_a_rule_and_its_default_keeps_it() -> None:
    QLearningSettings()  # the defaults pass their own checks
    QLearningSettings(patience=None, relatives_lowered_after=None)


def test_the_frontier_takes_its_settings_whole_and_the_registry_builds_them() -> None:
    settings = QLearningSettings(horizon=3, patience=0.25, relevant_at=0.3)
    frontier = QLearningFrontier(settings)
    assert frontier.settings is settings
    assert (frontier.patience, frontier.relevant_at) == (0.25, 0.3)
    made = make_frontier_policy("qlearning", horizon=3, relevant_at=0.3)
    assert isinstance(made, QLearningFrontier)
    assert made.settings == QLearningSettings(horizon=3, relevant_at=0.3)
    with pytest.raises(ValueError, match="frontier's horizon is 1 or more, not 0"):
        make_frontier_policy("qlearning", horizon=0)


def test_what_the_frontier_learns_is_in_attributes_ending_in_an_underscore() -> None:
    frontier = QLearningFrontier()
    seed = Candidate(url_id=1, url="http://a.test/", host="a.test", depth=0, score=0.5)
    frontier.push(seed)
    assert frontier.pop(lambda host: True) == seed
    child = Candidate(url_id=2, url="http://a.test/b", host="a.test", depth=1, score=0.2)
    frontier.on_fetched(seed, 0.8, [child])
    base = set(vars(PriorityFrontier()))
    own = {name for name in vars(frontier) if not name.startswith("_")} - base
    parts = {"settings", "model", "host_values", "section_values", "section_skill", "budget"}
    parts |= {"links", "relatives", "reranking"}
    assert {name for name in own if not name.endswith("_")} == parts
    assert frontier.subsidy_ > 0.0
    assert frontier.reward_rate_ > 0.0
    assert frontier.recent_reward_ == {"a.test": 0.8}  # its first reward
