"""Which hosts' queues a learning frontier ranks again after its model moved, a budget of
URLs at a time, so that the cost per fetch is flat whatever the frontier's size: every
host's while the model corrects the links' own indexes, then, once it stops, those of
the hosts still holding corrected indexes once more."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol


class SlicedQueue(Protocol):
    """What the re-ranking asks of the frontier whose hosts it ranks again."""

    def hosts(self) -> Iterator[str]: ...

    def host_size(self, host: str) -> int: ...

    def reprioritize_slice(self, host: str, limit: int) -> tuple[int, bool]: ...


class Reranking:
    def __init__(self, budget: int) -> None:
        self.budget = budget
        self._queue: list[str] = []  # hosts left to re-rank in this round
        # hosts whose queue holds indexes the model corrected, to rank again when it stops
        # (a dict: re-ranked in the order they came, whatever the strings' hashes)
        self._corrected_hosts: dict[str, None] = {}
        self._corrected_in_round: set[str] = set()  # hosts re-ranked in part, corrected

    def corrected(self, host: str) -> None:
        """`host`'s queue holds an index the model corrected."""
        self._corrected_hosts[host] = None

    def sliced(self, host: str, *, corrected: bool, ranked: int, done: bool) -> None:
        """A slice of `host` was ranked again; a host leaves the hosts holding corrected
        indexes once a whole round of it was re-ranked uncorrected."""
        if corrected and ranked:
            self._corrected_hosts[host] = None
            self._corrected_in_round.add(host)
        if done:
            if host not in self._corrected_in_round:
                self._corrected_hosts.pop(host, None)
            self._corrected_in_round.discard(host)

    def drop(self, host: str) -> None:
        self._corrected_hosts.pop(host, None)
        self._corrected_in_round.discard(host)

    def rerank_some(self, queue: SlicedQueue, *, correcting: bool) -> None:
        """Re-rank hosts' queues in turn, up to `budget` URLs (a slice of a host that
        holds more than twice as many, the rest in the next calls; a smaller host whole,
        in place, which costs half as much a URL), where the model's estimates move the
        links' own indexes: every host's while it corrects them (`correcting`), then
        those holding corrected indexes. Uncorrected, a link's own index is its score,
        and the sections' values move their links without re-ranking."""
        budget = self.budget
        started_round = False  # a queue smaller than the budget is re-ranked once
        while budget > 0:
            if not self._queue:
                if started_round:
                    return
                hosts = queue.hosts() if correcting else iter(self._corrected_hosts)
                self._queue = sorted(hosts, key=len)
                started_round = True
                if not self._queue:
                    return
            host = self._queue[-1]
            done = True
            if correcting or host in self._corrected_hosts:
                size = queue.host_size(host)  # whole, within twice the budget: it costs less
                limit = budget if size > 2 * self.budget else max(budget, size)
                ranked, done = queue.reprioritize_slice(host, limit)
                budget -= ranked
            if done:
                self._queue.pop()
