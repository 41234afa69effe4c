"""Which known URL to fetch next: the priority frontier (per-host queues under a heap of
host heads), its baselines, and the learned frontier (`policies.frontier.qlearning`)."""

from policies.frontier.baselines import BestFirst, BreadthFirst
from policies.frontier.candidate import Candidate, LinkContext
from policies.frontier.host_heads import HEADS_SLACK
from policies.frontier.priority import PriorityFrontier

__all__ = [
    "HEADS_SLACK",
    "BestFirst",
    "BreadthFirst",
    "Candidate",
    "LinkContext",
    "PriorityFrontier",
]
