"""Frontier policies: which known URL to fetch next.

A frontier policy is pushed candidates, told what each fetch found, and pops the next
candidate among the hosts that are ready (politeness decides readiness, the policy
decides order). The baselines of O'Meara & Patel (Section 5): breadth-first, and
best-first by estimated relevance ("fringe greedy"). Later policies subclass
`PriorityFrontier` with their own `priority`.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

HEADS_SLACK = 64  # stale head entries tolerated beyond two per host before a rebuild

Entry = tuple[float, int, int]  # a queued candidate's (negated priority, depth, sequence)


@dataclass(frozen=True, slots=True)
class Candidate:
    """A known, not yet fetched URL."""

    url_id: int
    url: str
    host: str
    depth: int
    score: float  # the link's estimated relevance, 0..1
    attempts: int = 0  # earlier tries that were put back (throttled, deferred)
    revisit: bool = False  # a fetched source, fetched again for what it published since
    # what the fetch that found it showed, for a URL read back from storage: the parent's
    # relevance (None: unknown, or a seed) and how many new URLs that fetch revealed
    parent_relevance: float | None = None
    revealed: int = 0
    # the words around the link where it was found, for a policy that learns from them
    # (empty for a seed or a URL read back from storage)
    context: LinkContext | None = None


@dataclass(frozen=True, slots=True)
class LinkContext:
    """The link as its parent page showed it."""

    anchor: str = ""
    around: str = ""  # the text of the block holding the link
    parent_title: str = ""  # the parent's title and headings


class PriorityFrontier:
    """Per-host priority queues under one heap of host heads.

    Highest `priority` first, ties to the shallower URL, then first-in first-out: with
    no signal in the priorities the order is breadth-first, so a page with thousands of
    equal links does not starve its siblings one level up. Hosts compete by their best
    URL's priority plus the host's `host_bonus`. Popping skips the hosts that are not
    ready without losing their place.

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

    def __init__(self, *, patience: float | None = None) -> None:
        if patience is not None and not 0.0 <= patience <= 1.0:
            raise ValueError(f"a frontier's patience is between 0 and 1, not {patience}")
        # a URL is fetched now only if its rank is at least `patience` times the rank of
        # the best URL whose host's turn comes soon; 0: never wait
        self.patience = self.default_patience if patience is None else patience
        # (negated priority, depth, sequence) by host, and the candidates by sequence: the
        # cyclic garbage collector stops tracking an entry of numbers only at its first
        # look, so a re-ranked queue's new entries are not among what it goes through
        # again and again (with the candidate in each, re-ranking took a quarter longer)
        self._queues: dict[str, list[Entry]] = {}
        self._candidates: dict[int, Candidate] = {}
        # (negated priority less the host's bonus, depth, sequence, host) of each host's
        # head; stale entries are skipped lazily when a host's head or bonus has changed
        # since the entry was pushed.
        self._heads: list[tuple[float, int, int, str]] = []
        self._sequence = itertools.count()
        self._size = 0
        self.waiting_for: str | None = None  # the host the last `pop` chose to wait for

    def priority(self, candidate: Candidate) -> float:
        raise NotImplementedError

    def push(self, candidate: Candidate) -> None:
        queue = self._queues.setdefault(candidate.host, [])
        # a re-visit is due now: it goes before its host's discoveries, whatever the order
        key = -math.inf if candidate.revisit else -self.priority(candidate)
        sequence = next(self._sequence)
        entry = (key, candidate.depth, sequence)
        heapq.heappush(queue, entry)
        self._candidates[sequence] = candidate
        self._size += 1
        if queue[0] is entry:
            self._push_head(queue, candidate.host)

    def push_many(self, candidates: Sequence[Candidate]) -> None:
        """Push these, in this order, as `push` would one by one (a policy may prepare
        them at once)."""
        for candidate in candidates:
            self.push(candidate)

    def pop(
        self,
        is_ready: Callable[[str], bool],
        turn_comes: Callable[[str], bool] | None = None,
    ) -> Candidate | None:
        """The best candidate whose host `is_ready`, or None: none is, or (with a
        `patience`) the best one ready ranks below `patience` times the best one whose
        host is not ready but whose turn comes soon (`turn_comes`), and the frontier
        waits for that host (`waiting_for`)."""
        skipped: list[tuple[float, int, int, str]] = []
        found: Candidate | None = None
        awaited: tuple[float, int, int, str] | None = None
        self.waiting_for = None
        while self._heads:
            head = heapq.heappop(self._heads)
            host = head[3]
            queue = self._queues.get(host)
            if not queue or self._head(queue, host) != head:
                continue  # stale
            if not is_ready(host):
                skipped.append(head)
                if awaited is None and self.patience > 0 and turn_comes and turn_comes(host):
                    awaited = head  # the best URL worth waiting for, if any ready one is not
                continue
            if awaited is not None and self._worth_waiting(host, -head[0], awaited[3], -awaited[0]):
                skipped.append(head)
                self.waiting_for = awaited[3]
                break
            found = self._candidates.pop(heapq.heappop(queue)[2])
            self._size -= 1
            if queue:
                self._push_head(queue, host)
            else:
                del self._queues[host]
            break
        for head in skipped:
            heapq.heappush(self._heads, head)
        return found

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

    def host_bonus(self, host: str) -> float:
        """What every URL of `host` gains when hosts compete (none for the baselines).
        A policy whose bonus of a host changes calls `refresh_host` for it."""
        return 0.0

    def refresh_host(self, host: str) -> None:
        """Rank `host` among the hosts by its bonus as it is now; its old head entry
        goes stale."""
        queue = self._queues.get(host)
        if queue:
            self._push_head(queue, host)

    def _push_head(self, queue: list[Entry], host: str) -> None:
        heapq.heappush(self._heads, self._head(queue, host))
        if len(self._heads) > 2 * len(self._queues) + HEADS_SLACK:
            self._rebuild_heads()  # stale entries ranking below every live one never leave

    def _rebuild_heads(self) -> None:
        self._heads = [self._head(queue, host) for host, queue in self._queues.items()]
        heapq.heapify(self._heads)

    def _head(self, queue: list[Entry], host: str) -> tuple[float, int, int, str]:
        """A host's entry in the heap of heads: its best URL's key less its bonus; an
        entry that no longer equals this is stale."""
        key, depth, sequence = queue[0]
        return (key - self.host_bonus(host), depth, sequence, host)

    def on_fetched(
        self, candidate: Candidate, relevance: float, children: Sequence[Candidate]
    ) -> None:
        """What fetching `candidate` found, told before its new `children` are pushed;
        the baselines learn nothing from it."""

    def priorities(self, candidates: Sequence[Candidate]) -> np.ndarray:
        """The priorities of many candidates (a policy may compute them at once)."""
        return np.array([self.priority(candidate) for candidate in candidates], dtype=float)

    def reprioritize(self) -> None:
        """Recompute every queued candidate's priority (a learning policy's changed),
        keeping ties in the order they came."""
        for host in list(self._queues):
            self.reprioritize_host(host)
        self._rebuild_heads()

    def reprioritize_host(self, host: str) -> int:
        """Recompute the priorities of one host's queued candidates; how many there were.
        Re-ranking host by host spreads a large queue's cost over many calls."""
        queue = self._queues.get(host)
        if not queue:
            return 0
        candidates = [self._candidates[entry[2]] for entry in queue]
        ranked: list[Entry] = []
        if any(candidate.revisit for candidate in candidates):  # due now: they stay first
            ranked = [e for e, c in zip(queue, candidates, strict=True) if c.revisit]
            kept = [(e, c) for e, c in zip(queue, candidates, strict=True) if not c.revisit]
            queue, candidates = [e for e, _ in kept], [c for _, c in kept]
        keys = self.priorities(candidates).tolist()
        ranked += [
            (-priority, depth, sequence)
            for (_, depth, sequence), priority in zip(queue, keys, strict=True)
        ]
        heapq.heapify(ranked)
        self._queues[host] = ranked
        self._push_head(ranked, host)  # the old head goes stale
        return len(ranked)

    def forget(self, candidate: Candidate) -> None:
        """`candidate`, popped, will not be fetched (a redirect reached its URL first): a
        policy lets go of what it kept of it."""

    def drop_host(self, host: str) -> list[Candidate]:
        """Take every queued candidate of `host` out (another crawler now serves it);
        them, in no order. Its head entry goes stale."""
        queue = self._queues.pop(host, [])
        self._size -= len(queue)
        return [self._candidates.pop(entry[2]) for entry in queue]

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

    def host_sizes(self) -> dict[str, int]:
        """Queued candidates by host."""
        return {host: len(queue) for host, queue in self._queues.items()}

    def __len__(self) -> int:
        return self._size


class BreadthFirst(PriorityFrontier):
    """Shallowest first, then in order of discovery."""

    name = "bfs"
    refill_order = "depth"

    def priority(self, candidate: Candidate) -> float:
        return -float(candidate.depth)


class BestFirst(PriorityFrontier):
    """Highest estimated relevance first ("fringe greedy"); breadth-first among equals."""

    name = "best-first"
    refill_order = "score"

    def priority(self, candidate: Candidate) -> float:
        return candidate.score
