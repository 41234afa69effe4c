"""The paper's Q-learning as it stands (O'Meara & Patel, eq. 10-11): the reward of a
fetch, and Q(x, fetch) in a table keyed by the page that discovered the URL, learned over
repeated traversals of one graph (`policies.offline.traversals` replays them)."""

from __future__ import annotations

from dataclasses import dataclass


def first_fetch_reward(relevance: float) -> float:
    """Eq. (11), the first retrieval: the page's relevance."""
    return relevance


def refetch_reward(old: float, new: float | None) -> float:
    """Eq. (11) for a page fetched again: max(old, new) if it changed, its old relevance
    if it is gone (`new` None)."""
    return old if new is None else max(old, new)


@dataclass(frozen=True, slots=True)
class LearningSettings:
    gamma: float = 0.5  # discount of what a fetch reveals
    step: float = 0.5  # a: the step size, decreasing as step / visits**step_decay
    step_decay: float = 0.5
    epsilon: float = 0.1  # the chance of fetching a random known URL instead of the best
    epsilon_decay: float = 0.9  # each traversal multiplies epsilon by this

    def __post_init__(self) -> None:
        checks = {
            "gamma": 0 <= self.gamma < 1,
            "step": 0 < self.step <= 1,
            "step_decay": 0 <= self.step_decay <= 1,
            "epsilon": 0 <= self.epsilon <= 1,
            "epsilon_decay": 0 <= self.epsilon_decay <= 1,
        }
        for name, ok in checks.items():
            if not ok:
                raise ValueError(f"learning setting {name}={getattr(self, name)} is out of range")

    def epsilon_at(self, traversal: int) -> float:
        return self.epsilon * self.epsilon_decay**traversal


class DiscovererTable:
    """Q(x, fetch) by (page, the page that discovered it), all zero at first (Section 6)."""

    def __init__(self, settings: LearningSettings) -> None:
        self.settings = settings
        self._values: dict[tuple[int, int], float] = {}
        self._visits: dict[tuple[int, int], int] = {}

    def __len__(self) -> int:
        return len(self._values)

    def index(self, page: int, discoverer: int) -> float:
        return self._values.get((page, discoverer), 0.0)

    def update(self, page: int, discoverer: int, reward: float, revealed: float) -> None:
        """Eq. (10) after fetching `page`; `revealed` sums its new children's values."""
        key = (page, discoverer)
        visits = self._visits.get(key, 0) + 1
        self._visits[key] = visits
        s = self.settings
        step = s.step / visits**s.step_decay
        old = self._values.get(key, 0.0)
        self._values[key] = (1 - step) * old + step * (reward + s.gamma * revealed)
