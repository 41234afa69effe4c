"""The baselines of O'Meara & Patel (Section 5): breadth-first, and best-first by
estimated relevance ("fringe greedy")."""

from __future__ import annotations

from policies.frontier.candidate import Candidate
from policies.frontier.priority import PriorityFrontier


class BreadthFirst(PriorityFrontier):
    """Shallowest first, then in order of discovery."""

    name = "bfs"
    refill_order = "depth"
    ranks_by_score = False

    def priority(self, candidate: Candidate) -> float:
        return -float(candidate.depth)


class BestFirst(PriorityFrontier):
    """Highest estimated relevance first ("fringe greedy"); breadth-first among equals."""

    name = "best-first"
    refill_order = "score"

    def priority(self, candidate: Candidate) -> float:
        return candidate.score
