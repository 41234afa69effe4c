"""The learned frontier (O'Meara & Patel, eq. 8-11): `QLearningFrontier`, composed of its
parts (the link model, the hosts' and sections' values, the exploration budget, the link
families, the held links' features), under one `QLearningSettings`."""

from policies.frontier.qlearning.frontier import QLearningFrontier
from policies.frontier.qlearning.settings import QLearningSettings

__all__ = ["QLearningFrontier", "QLearningSettings"]
