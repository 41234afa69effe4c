"""Re-ranking a priority frontier's queued URLs when the policy's priorities change: a
host whole, in place, or in slices, each re-ranked URL given a new entry beside its old
one, which is dead from then on (`RerankRound` keeps the new keys), so that a large
host's cost is spread over many calls."""

from __future__ import annotations

import heapq
from collections.abc import Sequence

import numpy as np

from policies.frontier.candidate import Candidate
from policies.frontier.host_heads import HostHeads
from policies.frontier.host_queue import Entry, HostQueue, RerankRound


class Reprioritizing(HostHeads):
    """The re-ranking of `PriorityFrontier`, which holds the queues and candidates."""

    _candidates: dict[int, Candidate]  # an entry whose sequence is not here is dead
    _rounds: dict[str, RerankRound]  # hosts being re-ranked in slices

    def own_priorities(self, candidates: Sequence[Candidate]) -> np.ndarray:
        raise NotImplementedError

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
