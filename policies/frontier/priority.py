"""Frontier policies: which known URL to fetch next.

A frontier policy is pushed candidates, told what each fetch found, and pops the next
candidate among the hosts that are ready (politeness decides readiness, the policy
decides order). The baselines (`policies.frontier.baselines`) and the learned frontier
(`policies.frontier.qlearning.frontier`) subclass `PriorityFrontier` with their own `priority`; the
ranks of its hosts and groups are `HostHeads`', its re-ranking `Reprioritizing`'s.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import ClassVar

import numpy as np

from policies.frontier.candidate import Candidate
from policies.frontier.host_queue import Head, HostQueue, RerankRound
from policies.frontier.host_rerank import Reprioritizing


class PriorityFrontier(Reprioritizing):
    """Per-host priority queues under one heap of host heads.

    Highest `priority` first, ties to the shallower URL, then first-in first-out: with
    no signal in the priorities the order is breadth-first, so a page with thousands of
    equal links does not starve its siblings one level up. Hosts compete by their best
    URL's priority plus the host's `host_bonus`. A host that a pop finds not ready is
    parked: it leaves the heap of hosts that compete until the crawl says its turn has
    come (`unpark`), so a pop looks at each host not ready once a turn, not at every
    dispatch. `drain_parked` tells the crawl which hosts were parked since it last asked.

    A policy may split a host's queue into groups (`group_of`) whose URLs share a bonus
    that moves (`group_bonus`): a URL's priority is its own (`own_priority`) plus its
    group's. Each group is a heap of its URLs' own priorities under a heap of the
    host's group heads, so a group's bonus moves all its URLs at once when the policy
    calls `refresh_group`, without ranking any of them again. The baselines have one
    group a host and no bonus.

    With a `patience`, a URL ranked below that share of the best URL of a host that is
    busy with its usual turn is not fetched: the slot waits for that host. Politeness
    caps each host's requests, so a crawl that fills every slot spends the slots the best
    host cannot take on the others' worst URLs; when one host's URLs rank far above the
    rest, that is most of a crawl's pages (on the real web of `bench/realweb`, half).
    """

    name = "priority"
    # The order in which a frontier spilled to the database comes back: "score" or
    # "depth" where the priority grows with the link's score or falls with its depth
    # (the database reads them in that order), else "priority": every queued URL is read
    # and the policy's own `priorities` choose.
    refill_order: ClassVar[str] = "priority"
    # The policy's own `patience` (see `pop`): the baselines fill every slot they can.
    default_patience: ClassVar[float] = 0.0
    # Whether it reads a candidate's `context`: if not, the crawl keeps none (on the
    # testbed a queued link's words took about as much memory as the rest of it)
    reads_link_context: ClassVar[bool] = False
    # Whether a candidate's score moves its rank: if not, a raised score is kept without
    # ranking the candidate again (which would move it behind its equals)
    ranks_by_score: ClassVar[bool] = True

    def __init__(self, *, patience: float | None = None, relevant_at: float = 0.1) -> None:
        if patience is not None and not 0.0 <= patience <= 1.0:
            raise ValueError(f"a frontier's patience is between 0 and 1, not {patience}")
        if not 0.0 <= relevant_at <= 1.0:
            raise ValueError(f"a frontier's relevant_at is between 0 and 1, not {relevant_at}")
        # the crawl's relevance threshold: a page this relevant counts as relevant, for a
        # policy that acts on it (the Q-learning frontier raises the links found beside it)
        self.relevant_at = relevant_at
        # a URL is fetched now only if its rank is at least `patience` times the rank of
        # the best URL whose host's turn comes soon; 0: never wait
        self.patience = self.default_patience if patience is None else patience
        # entries of numbers by host and group, and the candidates by sequence: the
        # cyclic garbage collector stops tracking an entry of numbers only at its first
        # look, so a re-ranked queue's new entries are not among what it goes through
        # again and again (with the candidate in each, re-ranking took a quarter longer)
        self._queues: dict[str, HostQueue] = {}
        self._candidates: dict[int, Candidate] = {}  # an entry whose sequence is not here is dead
        self._sequence_of: dict[int, int] = {}  # a new URL's live entry, by its id
        self._rounds: dict[str, RerankRound] = {}  # hosts being re-ranked in slices
        # (negated rank less the host's bonus, depth, sequence, host) of each host's head;
        # an entry is stale once another is pushed for its host (its head or bonus moved),
        # and skipped lazily
        self._heads: list[Head] = []
        # hosts not ready: their heads wait here, ranked alike, for the patience to read
        self._parked: set[str] = set()
        self._parked_heads: list[Head] = []
        self._newly_parked: list[str] = []  # since the last `drain_parked`
        self._sequence = itertools.count()
        # sequences of candidates put back before their equals (`push_ahead`)
        self._ahead = itertools.count(-1, -1)
        self._pushing_ahead = False
        self._size = 0
        self.waiting_for: str | None = None  # the host the last `pop` chose to wait for

    def priority(self, candidate: Candidate) -> float:
        """The candidate's rank among all queued: its own priority plus its group's
        bonus (the host's bonus aside)."""
        raise NotImplementedError

    def own_priority(self, candidate: Candidate) -> float:
        """The candidate's priority without its group's bonus: its key in its group."""
        return self.priority(candidate)

    def is_relevant(self, relevance: float) -> bool:
        """Whether a page this relevant counts as relevant: above zero and at `relevant_at`
        or above."""
        return relevance > 0.0 and relevance >= self.relevant_at

    def own_priorities(self, candidates: Sequence[Candidate]) -> np.ndarray:
        """The own priorities of many queued candidates (a policy may compute them at
        once)."""
        return self.priorities(candidates)

    def group_of(self, candidate: Candidate) -> str:
        """The group of its host's queue a candidate is in: one group a host here."""
        return ""

    def push(self, candidate: Candidate) -> None:
        host = candidate.host
        queues = self._queues.get(host)
        if queues is None:
            queues = self._queues[host] = HostQueue()
        group = self.group_of(candidate)
        queue = queues.get(group)
        if queue is None:
            queue = queues.add(group)
        # a re-visit is due now: it goes before its host's discoveries, whatever the order
        key = -math.inf if candidate.revisit else -self.own_priority(candidate)
        sequence = next(self._ahead if self._pushing_ahead else self._sequence)
        entry = (key, candidate.depth, sequence)
        heapq.heappush(queue, entry)
        self._candidates[sequence] = candidate
        if not candidate.revisit:
            self._sequence_of[candidate.url_id] = sequence
        self._size += 1
        queues.size += 1
        if queue[0] is entry:
            head = self._push_group_head(queues, queue, group)
            if head is None or self._best_group(queues) is head:
                self._push_head(queues, host)

    def push_ahead(self, candidate: Candidate) -> None:
        """Push back a candidate popped whose turn went to something else (its host's
        robots.txt): it goes before the candidates it ranks equal with, as it did."""
        self._pushing_ahead = True
        try:
            self.push(candidate)
        finally:
            self._pushing_ahead = False

    def push_many(self, candidates: Sequence[Candidate]) -> None:
        """Push these, in this order, as `push` would one by one (a policy may prepare
        them at once)."""
        for candidate in candidates:
            self.push(candidate)

    def holds(self, url_id: int) -> bool:
        """Whether a new URL (not a re-visit) is queued here."""
        return url_id in self._sequence_of

    def queued_score(self, url_id: int) -> float | None:
        """The estimate a queued new URL is ranked by; None if it is not queued."""
        sequence = self._sequence_of.get(url_id)
        return None if sequence is None else self._candidates[sequence].score

    def raise_score(self, url_id: int, score: float) -> bool:
        """Rank a queued new URL by a higher estimate `score` (a relevant page links to
        it too); whether it was here with a lower one."""
        queued = self.queued_score(url_id)
        return queued is not None and queued < score and self.rescore(url_id, score)

    def rescore(self, url_id: int, score: float) -> bool:
        """Rank a queued new URL by the estimate `score`, higher or lower than its own;
        whether it was here with another. Its old entry stays in its heap, dead, until
        it comes to the top."""
        sequence = self._sequence_of.get(url_id)
        if sequence is None:
            return False
        candidate = self._candidates[sequence]
        if candidate.score == score:
            return False
        if not self.ranks_by_score:
            self._candidates[sequence] = replace(candidate, score=score)
            return True
        del self._candidates[sequence]
        keys = self._keys_of(candidate.host)
        queues = self._queues[candidate.host]
        self._size -= 1
        queues.size -= 1
        self.push(replace(candidate, score=score))
        group = self.group_of(candidate)
        queue = queues.get(group)
        assert queue is not None
        if queue[0][2] == sequence:  # the dead entry heads its group: the live one under it
            self._drop_dead(queue, keys)
            self.refresh_group(candidate.host, group)
        return True

    def _forget_sequence(self, candidate: Candidate, sequence: int) -> None:
        if self._sequence_of.get(candidate.url_id) == sequence:
            del self._sequence_of[candidate.url_id]

    def pop(
        self,
        is_ready: Callable[[str], bool],
        turn_comes: Callable[[str], bool] | None = None,
    ) -> Candidate | None:
        """The best candidate whose host `is_ready`, or None: none is, or (with a
        `patience`) the best one ready ranks below `patience` times the best one whose
        host is not ready but whose turn comes soon (`turn_comes`), and the frontier
        waits for that host (`waiting_for`)."""
        self.waiting_for = None
        while self._heads:
            head = heapq.heappop(self._heads)
            host = head[3]
            queues = self._queues.get(host)
            if queues is None or queues.head is not head:
                continue  # stale
            if not is_ready(host):
                self._park(host, head)
                continue
            self._parked.discard(host)
            awaited = self._awaited(turn_comes) if self.patience > 0 and turn_comes else None
            if awaited is not None and self._worth_waiting(host, -head[0], awaited[3], -awaited[0]):
                heapq.heappush(self._heads, head)
                self.waiting_for = awaited[3]
                return None
            return self._take(queues, host)
        return None

    def _worth_waiting(
        self, host: str, rank: float, awaited_host: str, awaited_rank: float
    ) -> bool:
        """Whether a URL of `host` of `rank` is worth less than waiting for one of
        `awaited_host` of `awaited_rank` (a re-visit, due now, is not waited for)."""
        return (
            self.patience > 0
            and math.isfinite(awaited_rank)
            and awaited_rank > 0
            and rank < self.patience * awaited_rank
        )

    def _take(self, queues: HostQueue, host: str) -> Candidate:
        """The best candidate of a host, taken out of its queue."""
        group = self._best_group(queues)[3]
        queue = queues.get(group)
        assert queue is not None
        sequence = heapq.heappop(queue)[2]
        found = self._candidates.pop(sequence)
        keys = self._keys_of(host)
        if keys:
            keys.pop(sequence, None)
        self._forget_sequence(found, sequence)
        self._size -= 1
        queues.size -= 1
        self._drop_dead(queue, keys)
        if queue:
            self._push_group_head(queues, queue, group)
        else:
            queues.remove(group)
            self._rebuild_group_heads(queues)
        if queues.size:
            self._push_head(queues, host)
        else:
            del self._queues[host]
        return found

    def on_fetched(
        self, candidate: Candidate, relevance: float, children: Sequence[Candidate]
    ) -> None:
        """What fetching `candidate` found, told before its new `children` are pushed;
        the baselines learn nothing from it."""

    def priorities(self, candidates: Sequence[Candidate]) -> np.ndarray:
        """The priorities of many candidates (a policy may compute them at once)."""
        return np.array([self.priority(candidate) for candidate in candidates], dtype=float)

    def forget(self, candidate: Candidate) -> None:
        """`candidate`, popped, will not be fetched (a redirect reached its URL first): a
        policy lets go of what it kept of it."""

    def drop_host(self, host: str) -> list[Candidate]:
        """Take every queued candidate of `host` out (another crawler now serves it);
        them, in no order. Its head entry goes stale."""
        queues = self._queues.pop(host, None)
        self._rounds.pop(host, None)
        self._parked.discard(host)
        if queues is None:
            return []
        self._size -= queues.size
        dropped = []
        for _, queue in queues.items():
            for _, _, sequence in queue:
                candidate = self._candidates.pop(sequence, None)
                if candidate is not None:
                    self._forget_sequence(candidate, sequence)
                    dropped.append(candidate)
        return dropped

    def get_state(self) -> bytes | None:
        """What the policy learned, to save; None for a policy that learns nothing."""
        return None

    def set_state(self, state: bytes) -> None:
        """Bring back what `get_state` saved."""

    def merge(self, states: Sequence[bytes]) -> None:
        """Learn from what other processes of one crawl saved with `get_state`;
        `get_state` stays this process's own."""

    def hosts(self) -> Iterator[str]:
        """The hosts that have queued candidates."""
        return iter(self._queues)

    def host_size(self, host: str) -> int:
        """Queued candidates of `host`."""
        queues = self._queues.get(host)
        return 0 if queues is None else queues.size

    def host_count(self) -> int:
        """Hosts with queued candidates."""
        return len(self._queues)

    def host_sizes(self) -> dict[str, int]:
        """Queued candidates by host."""
        return {host: queues.size for host, queues in self._queues.items()}

    def __len__(self) -> int:
        return self._size
