"""A host's queue of a priority frontier: a heap of entries for each group of its URLs,
and what a re-ranking in slices keeps of the host between slices."""

from __future__ import annotations

from collections.abc import Iterable

Entry = tuple[float, int, int]  # a queued candidate's (negated own priority, depth, sequence)
Head = tuple[float, int, int, str]  # a group's or a host's (negated rank, depth, sequence, name)


class HostQueue:
    """One host's queued candidates: a heap of entries a group and, once it has two
    groups, a heap of the groups' heads, of which each group's last pushed is its own
    (the others are stale and skipped lazily); the host's last pushed entry in the heap
    of hosts' heads. A host of one group, as every host of the baselines, holds its one
    heap in slots of its own, with no dict of groups and no heap of heads: 100,000 URLs
    on as many hosts take 46 MB, against 62 with a dict of one group a host and 97 with
    a heap of heads too."""

    __slots__ = ("group", "group_heads", "groups", "head", "heads", "queue", "size")

    def __init__(self) -> None:
        # a host of one group: that group and its heap; of more, all of them in `groups`
        self.group: str | None = None
        self.queue: list[Entry] | None = None
        self.groups: dict[str, list[Entry]] | None = None
        self.heads: list[Head] | None = None
        self.group_heads: dict[str, Head] | None = None
        self.head: Head | None = None
        self.size = 0

    def get(self, group: str) -> list[Entry] | None:
        if self.groups is None:
            return self.queue if group == self.group else None
        return self.groups.get(group)

    def add(self, group: str) -> list[Entry]:
        """A new, empty group's heap."""
        queue: list[Entry] = []
        if self.queue is None and self.groups is None:
            self.group, self.queue = group, queue
        elif self.groups is None:
            assert self.group is not None
            assert self.queue is not None
            self.groups = {self.group: self.queue, group: queue}
            self.group = self.queue = None
        else:
            self.groups[group] = queue
        return queue

    def remove(self, group: str) -> None:
        if self.groups is None:
            self.group = self.queue = None
            return
        del self.groups[group]
        if len(self.groups) == 1:
            ((self.group, self.queue),) = self.groups.items()
            self.groups = None

    def items(self) -> Iterable[tuple[str, list[Entry]]]:
        if self.groups is not None:
            return self.groups.items()
        return () if self.group is None or self.queue is None else ((self.group, self.queue),)


class RerankRound:
    """A host being re-ranked in slices: the entries of each of its groups left to
    re-rank, and the key of each re-ranked candidate's new entry (its old entry, of
    another key, is dead until the round's end drops it)."""

    __slots__ = ("keys", "left")

    def __init__(self, queues: HostQueue) -> None:
        # taken from the end: the best group first, and each heap reversed, so that its
        # top levels come first (the URLs whose turn comes soonest)
        groups = sorted(queues.items(), key=lambda item: item[1][0], reverse=True)
        self.left = [(group, queue[::-1]) for group, queue in groups]
        self.keys: dict[int, float] = {}

    def take(self, limit: int) -> tuple[list[Entry], list[str]]:
        """Up to `limit` entries left, and the group of each."""
        taken: list[Entry] = []
        groups: list[str] = []
        while self.left and len(taken) < limit:
            group, entries = self.left[-1]
            share = min(limit - len(taken), len(entries))
            taken += entries[len(entries) - share :]
            groups += [group] * share
            del entries[len(entries) - share :]
            if not entries:
                self.left.pop()
        return taken, groups
