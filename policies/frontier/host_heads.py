"""The ranks of a priority frontier's hosts and groups: a heap of each host's head (its
best group's head less the host's bonus) and, in each host of several groups, a heap of
the groups' heads (each group's best URL less the group's bonus). An entry goes stale
once another is pushed for its host or group, and is skipped lazily. A host that is not
ready is parked: its head waits in a heap of its own until its turn comes."""

from __future__ import annotations

import heapq
from collections.abc import Callable

from policies.frontier.host_queue import Entry, Head, HostQueue

HEADS_SLACK = 64  # stale head entries tolerated beyond two per host before a rebuild


class HostHeads:
    """The heaps of heads of `PriorityFrontier`, which holds the queues they rank."""

    _queues: dict[str, HostQueue]
    # (negated rank less the host's bonus, depth, sequence, host) of each host's head
    _heads: list[Head]
    # hosts not ready: their heads wait here, ranked alike, for the patience to read
    _parked: set[str]
    _parked_heads: list[Head]
    _newly_parked: list[str]  # since the last `drain_parked`

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

    def host_bonus(self, host: str) -> float:
        """What every URL of `host` gains when hosts compete (none for the baselines).
        A policy whose bonus of a host changes calls `refresh_host` for it."""
        return 0.0

    def group_bonus(self, group: str) -> float:
        """What every URL of `group` gains (none for the baselines). A policy whose bonus
        of a group changes calls `refresh_group` for it."""
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
