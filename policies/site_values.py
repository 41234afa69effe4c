"""What a host's pages, and a section's of a host, are worth, learned from the pages
fetched there, with optimism for those barely tried.

A frontier that ranks each link by its own estimate alone can leave untried a host whose
first links promise nothing: on the real web of `bench/realweb`, SciPy's front page
links to "Getting started", "API reference" and "Development", and best-first, busy
with other hosts' links that name the topic, fetches nothing else of the host that holds
1,000 of the 1,029 pages on "sparse matrix" in three crawls of five. Each host is an
arm of a bandit whose mean reward (eq. (11): a page's relevance) is unknown. Its index is

    mean reward of its pages, shrunk by n / (n + prior)  +  optimism / sqrt(1 + tried)

where n pages of it were fetched and `tried` URLs were taken from its queue: the
posterior-mean-plus-uncertainty shape of UCB (Auer, Cesa-Bianchi & Fischer, Machine
Learning 2002), without the log of all tries, so that an arm's value changes only when
that arm is tried or fetched and the heap of hosts stays exact without re-ranking
every host. The frontier adds a host's index to each of its URLs' own priorities when
hosts compete (`PriorityFrontier.host_bonus`).

The same holds one level down. Within a host, a section (the first segment of the
path: SciPy's `reference/`, `tutorial/` and `dev/`, a Javadoc module) is an arm of its
own: once SciPy's host is tried, the links of its API pages that mention anything rank
above its "Development" link, which mentions nothing, and on "git branch merge rebase"
the ten relevant pages under `dev/` were not reached within 1,000 pages. A section's
index is the same formula over the section's URLs, and it is added to each URL's own
priority (`section_of` names the arm, `PriorityFrontier.group_bonus`). The Q-learning
frontier counts the mean reward at the finer level only, the section's, and gives a host
its optimism alone (weight 0): a host's mean added to its sections' would count each
page twice, and on "fourier transform signal frequency" kept the crawl on SciPy's host
(955 to 960 pages of 1,000 in three crawls) after its one rich section was exhausted,
away from Java's relevant pages.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass


def section_of(url: str) -> str:
    """The section of `url`'s host that it belongs to: the host and the first segment
    of the path, or the host and "/" for the pages at its root."""
    path_parts = url.split("?", 1)[0].split("/", 4)  # scheme, "", host, segment, rest
    if len(path_parts) < 5:
        return f"{path_parts[2] if len(path_parts) > 2 else url}/"
    return f"{path_parts[2]}/{path_parts[3]}"


@dataclass(slots=True)
class ArmRecord:
    tried: int = 0  # URLs taken from the arm's queue
    fetched: int = 0  # of which the fetch was learned from
    reward: float = 0.0  # the sum of their rewards


class SiteValues:
    """The index of each arm (a host, or a section of one), from what was tried and
    fetched there."""

    def __init__(self, *, optimism: float = 0.1, weight: float = 3.0, prior: float = 5.0):
        if optimism < 0 or weight < 0 or prior <= 0:
            raise ValueError(
                f"site values need optimism >= 0, weight >= 0 and prior > 0, "
                f"not {optimism}, {weight}, {prior}"
            )
        self.optimism, self.weight, self.prior = optimism, weight, prior
        self._arms: dict[str, ArmRecord] = {}

    def index(self, arm: str) -> float:
        record = self._arms.get(arm)
        if record is None:
            return self.optimism
        mean = record.reward / (record.fetched + self.prior)
        return self.weight * mean + self.optimism / math.sqrt(1 + record.tried)

    def tries(self, arm: str) -> int:
        record = self._arms.get(arm)
        return 0 if record is None else record.tried

    def tried(self, arm: str) -> None:
        self._record(arm).tried += 1

    def fetched(self, arm: str, reward: float) -> None:
        record = self._record(arm)
        record.fetched += 1
        record.reward += reward

    def _record(self, arm: str) -> ArmRecord:
        record = self._arms.get(arm)
        if record is None:
            record = self._arms[arm] = ArmRecord()
        return record

    def get_state(self) -> dict[str, list[float]]:
        return {
            arm: [record.tried, record.fetched, record.reward] for arm, record in self._arms.items()
        }

    def set_state(self, state: Mapping[str, list[float]]) -> None:
        arms = {}
        for arm, (tried, fetched, reward) in state.items():
            if tried < 0 or fetched < 0 or not math.isfinite(reward):
                raise ValueError(f"saved site values of {arm!r} are out of range")
            arms[arm] = ArmRecord(int(tried), int(fetched), float(reward))
        self._arms = arms
