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
from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np

from policies.host_queue import Entry, Head, HostQueue, RerankRound

HEADS_SLACK = 64  # stale head entries tolerated beyond two per host before a rebuild


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
    # (None for a seed, a URL read back from storage, or one such a policy has queued)
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

    def group_bonus(self, group: str) -> float:
        """What every URL of `group` gains (none for the baselines). A policy whose bonus
        of a group changes calls `refresh_group` for it."""
        return 0.0

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

    def _keys_of(self, host: str) -> dict[int, float] | None:
        """The new keys of a host being re-ranked in slices; None for another host."""
        round_ = self._rounds.get(host)
        return None if round_ is None else round_.keys

    def _live_entries(self, entries: list[Entry], keys: dict[int, float] | None) -> list[Entry]:
        """Those of a host's entries that stand for a queued candidate at its key."""
        candidates = self._candidates
        if keys is None:
            return [entry for entry in entries if entry[2] in candidates]
        return [e for e in entries if e[2] in candidates and keys.get(e[2], e[0]) == e[0]]

    def _drop_dead(self, queue: list[Entry], keys: dict[int, float] | None) -> None:
        """Pop the dead entries at the top of a group's heap: a head is always live."""
        while queue:
            key, _, sequence = queue[0]
            if sequence in self._candidates and (keys is None or keys.get(sequence, key) == key):
                return
            heapq.heappop(queue)

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

    def _park(self, host: str, head: Head) -> None:
        if host not in self._parked:
            self._parked.add(host)
            self._newly_parked.append(host)
        heapq.heappush(self._parked_heads, head)

    def _awaited(self, turn_comes: Callable[[str], bool]) -> Head | None:
        """The best parked host's head whose turn comes soon (not backing off)."""
        passed: list[Head] = []
        found = None
        while self._parked_heads:
            head = self._parked_heads[0]
            queues = self._queues.get(head[3])
            if head[3] not in self._parked or queues is None or queues.head is not head:
                heapq.heappop(self._parked_heads)  # stale
            elif turn_comes(head[3]):
                found = head
                break
            else:
                passed.append(heapq.heappop(self._parked_heads))
        for head in passed:
            heapq.heappush(self._parked_heads, head)
        return found

    def unpark(self, host: str) -> None:
        """`host`'s turn has come: it competes again."""
        if host in self._parked:
            self._parked.discard(host)
            queues = self._queues.get(host)
            if queues is not None and queues.head is not None:
                heapq.heappush(self._heads, queues.head)

    def is_parked(self, host: str) -> bool:
        return host in self._parked

    def drain_parked(self) -> list[str]:
        """The hosts parked since the last call: the crawl unparks each when its turn
        comes."""
        parked, self._newly_parked = self._newly_parked, []
        return parked

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

    def host_bonus(self, host: str) -> float:
        """What every URL of `host` gains when hosts compete (none for the baselines).
        A policy whose bonus of a host changes calls `refresh_host` for it."""
        return 0.0

    def refresh_host(self, host: str) -> None:
        """Rank `host` among the hosts by its bonus as it is now; its old head entry
        goes stale."""
        queues = self._queues.get(host)
        if queues is not None:
            self._push_head(queues, host)

    def refresh_group(self, host: str, group: str) -> None:
        """Rank `group` of `host` by its bonus as it is now, and `host` by its own; their
        old head entries go stale."""
        queues = self._queues.get(host)
        if queues is None:
            return
        queue = queues.get(group)
        if queue is not None:
            self._push_group_head(queues, queue, group)
        self._push_head(queues, host)

    def refresh_all(self) -> None:
        """Rank every group and host by its bonus as it is now."""
        for queues in self._queues.values():
            self._rebuild_group_heads(queues)
        self._rebuild_heads()

    def _push_head(self, queues: HostQueue, host: str) -> None:
        """Push the host's head as it is now: its best group's head less its bonus."""
        key, depth, sequence, _ = self._best_group(queues)
        queues.head = head = (key - self.host_bonus(host), depth, sequence, host)
        heapq.heappush(self._parked_heads if host in self._parked else self._heads, head)
        if len(self._heads) + len(self._parked_heads) > 2 * len(self._queues) + HEADS_SLACK:
            self._rebuild_heads()  # stale entries ranking below every live one never leave

    def _push_group_head(self, queues: HostQueue, queue: list[Entry], group: str) -> Head | None:
        """Push a group's head as it is now: its best URL's key less its bonus; none for
        a host of one group, whose head is computed when asked."""
        if queues.groups is None:
            return None
        if queues.heads is None or queues.group_heads is None:  # a second group
            return self._rebuild_group_heads(queues)[group]
        queues.group_heads[group] = head = self._group_head(queue, group)
        heapq.heappush(queues.heads, head)
        if len(queues.heads) > 2 * len(queues.groups) + HEADS_SLACK:
            queues.heads = list(queues.group_heads.values())
            heapq.heapify(queues.heads)
        return head

    def _rebuild_heads(self) -> None:
        self._heads, self._parked_heads = [], []
        for host, queues in self._queues.items():
            self._push_head(queues, host)

    def _rebuild_group_heads(self, queues: HostQueue) -> dict[str, Head]:
        """Each group's head as it is now (none kept for a host of one group)."""
        live = {group: self._group_head(queue, group) for group, queue in queues.items()}
        if len(live) < 2:
            queues.heads = queues.group_heads = None
        else:
            queues.heads, queues.group_heads = list(live.values()), live
            heapq.heapify(queues.heads)
        return live

    def _group_head(self, queue: list[Entry], group: str) -> Head:
        key, depth, sequence = queue[0]
        return (key - self.group_bonus(group), depth, sequence, group)

    def _best_group(self, queues: HostQueue) -> Head:
        """The head of a host's best group, the stale heads above it dropped."""
        heads, live = queues.heads, queues.group_heads
        if heads is None or live is None:  # one group
            assert queues.group is not None
            assert queues.queue is not None
            return self._group_head(queues.queue, queues.group)
        while live.get((top := heads[0])[3]) is not top:
            heapq.heappop(heads)
        return top

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
        """Recompute the own priorities of one host's queued candidates; how many there
        were. Re-ranking host by host spreads a large queue's cost over many calls."""
        round_ = self._rounds.pop(host, None)
        queues = self._queues.get(host)
        if queues is None:
            return 0
        return self._rerank_whole(queues, host, None if round_ is None else round_.keys)

    def reprioritize_slice(self, host: str, limit: int) -> tuple[int, bool]:
        """Recompute the own priorities of up to `limit` of one host's queued candidates,
        those not re-ranked since the host's round began; how many, and whether the
        round is over. Each re-ranked candidate gets a new entry beside its old one,
        which is dead from then on, and at the round's end the host's heaps keep their
        live entries only: a host of 100,000 URLs is re-ranked over many calls, each
        costing its share (a URL about twice what it costs in a whole host's
        re-ranking, in place). A host of no more than `limit` is re-ranked whole."""
        queues = self._queues.get(host)
        if queues is None:
            self._rounds.pop(host, None)
            return 0, True
        round_ = self._rounds.get(host)
        if round_ is None:
            if queues.size <= limit:
                return self._rerank_whole(queues, host, None), True
            round_ = self._rounds[host] = RerankRound(queues)
        keys = round_.keys
        taken, groups = round_.take(limit)
        fresh: list[tuple[Entry, str]] = []
        ranked: list[Candidate] = []
        live = 0
        for entry, group in zip(taken, groups, strict=True):
            candidate = self._candidates.get(entry[2])
            if candidate is None or keys.get(entry[2], entry[0]) != entry[0]:
                continue  # dead
            live += 1
            if not candidate.revisit:  # due now: it stays first
                fresh.append((entry, group))
                ranked.append(candidate)
        moved: dict[str, list[Entry]] = {}
        priorities = self.own_priorities(ranked).tolist()
        for ((old, depth, sequence), group), priority in zip(fresh, priorities, strict=True):
            if -priority != old:
                keys[sequence] = -priority
                moved.setdefault(group, []).append((-priority, depth, sequence))
        for group, entries in moved.items():
            queue = queues.get(group)
            assert queue is not None  # a queued candidate's group holds its entry
            for entry in entries:  # a push costs less than a new heap of 4,000 or more
                heapq.heappush(queue, entry)
            self._drop_dead(queue, keys)  # the old entry may have headed it
        done = not round_.left
        if done:
            del self._rounds[host]
            for _, queue in queues.items():
                queue[:] = self._live_entries(queue, keys)
                heapq.heapify(queue)
        if moved or done:
            self._rebuild_group_heads(queues)
            self._push_head(queues, host)  # the old head goes stale
        return live, done

    def _rerank_whole(self, queues: HostQueue, host: str, keys: dict[int, float] | None) -> int:
        """Every queued candidate of a host re-ranked at once, in place (`keys`: those
        of the round it ends)."""
        groups = [queue for _, queue in queues.items()]
        for queue in groups:
            queue[:] = self._live_entries(queue, keys)
        entries = [entry for queue in groups for entry in queue]
        candidates = [self._candidates[entry[2]] for entry in entries]
        if any(candidate.revisit for candidate in candidates):  # due now: they stay first
            fresh = [candidate for candidate in candidates if not candidate.revisit]
            priorities = iter(self.own_priorities(fresh).tolist())
            ranked = [
                entry if candidate.revisit else (-next(priorities), entry[1], entry[2])
                for entry, candidate in zip(entries, candidates, strict=True)
            ]
        else:
            ranked = [
                (-priority, depth, sequence)
                for (_, depth, sequence), priority in zip(
                    entries, self.own_priorities(candidates).tolist(), strict=True
                )
            ]
        start = 0
        for queue in groups:
            end = start + len(queue)
            queue[:] = ranked[start:end]
            heapq.heapify(queue)
            start = end
        self._rebuild_group_heads(queues)
        self._push_head(queues, host)  # the old head goes stale
        return len(entries)

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
