"""What a host's pages are worth, learned from the pages fetched there, with optimism
for the hosts barely tried.

A frontier that ranks each link by its own estimate alone can leave untried a host whose
first links promise nothing: on the real web of `bench/realweb`, SciPy's front page
links to "Getting started", "API reference" and "Development", and best-first, busy
with other hosts' links that name the topic, fetches nothing else of the host that holds
1,000 of the 1,029 pages on "sparse matrix" in three crawls of five. Each host is an
arm of a bandit whose mean reward (eq. (11): a page's relevance) is unknown. Its index is

    mean reward of its pages, shrunk by n / (n + prior)  +  optimism / sqrt(1 + tried)

where n pages of it were fetched and `tried` URLs were taken from its queue: the
posterior-mean-plus-uncertainty shape of UCB (Auer, Cesa-Bianchi & Fischer, Machine
Learning 2002), without the log of all tries, so that a host's value changes only when
that host is tried or fetched and the heap of hosts stays exact without re-ranking
every host. The frontier adds a host's index to each of its URLs' own priorities when
hosts compete (`PriorityFrontier.host_bonus`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(slots=True)
class HostRecord:
    tried: int = 0  # URLs taken from the host's queue
    fetched: int = 0  # of which the fetch was learned from
    reward: float = 0.0  # the sum of their rewards


class HostValues:
    """The index of each host, from what was tried and fetched there."""

    def __init__(self, *, optimism: float = 0.1, weight: float = 3.0, prior: float = 5.0):
        if optimism < 0 or weight < 0 or prior <= 0:
            raise ValueError(
                f"host values need optimism >= 0, weight >= 0 and prior > 0, "
                f"not {optimism}, {weight}, {prior}"
            )
        self.optimism, self.weight, self.prior = optimism, weight, prior
        self._hosts: dict[str, HostRecord] = {}

    def index(self, host: str) -> float:
        record = self._hosts.get(host)
        if record is None:
            return self.optimism
        mean = record.reward / (record.fetched + self.prior)
        return self.weight * mean + self.optimism / math.sqrt(1 + record.tried)

    def tries(self, host: str) -> int:
        record = self._hosts.get(host)
        return 0 if record is None else record.tried

    def tried(self, host: str) -> None:
        self._record(host).tried += 1

    def fetched(self, host: str, reward: float) -> None:
        record = self._record(host)
        record.fetched += 1
        record.reward += reward

    def _record(self, host: str) -> HostRecord:
        record = self._hosts.get(host)
        if record is None:
            record = self._hosts[host] = HostRecord()
        return record

    def get_state(self) -> dict[str, list[float]]:
        return {
            host: [record.tried, record.fetched, record.reward]
            for host, record in self._hosts.items()
        }

    def set_state(self, state: Mapping[str, list[float]]) -> None:
        hosts = {}
        for host, (tried, fetched, reward) in state.items():
            if tried < 0 or fetched < 0 or not math.isfinite(reward):
                raise ValueError(f"saved host values of {host!r} are out of range")
            hosts[host] = HostRecord(int(tried), int(fetched), float(reward))
        self._hosts = hosts
