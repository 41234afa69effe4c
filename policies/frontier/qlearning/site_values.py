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
away from Java's relevant pages. And it weighs the sections' values by how much better
the sections predict their pages than the pages' links do (`SectionSkill`).
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
        self.full_optimism = optimism
        self._arms: dict[str, ArmRecord] = {}

    def explore(self, on: bool) -> None:
        """Give the arms barely tried their optimism, or none (`ExplorationBudget`)."""
        self.optimism = self.full_optimism if on else 0.0

    def index(self, arm: str) -> float:
        record = self._arms.get(arm)
        if record is None:
            return self.optimism
        return self.weight * self.mean(arm) + self.optimism / math.sqrt(1 + record.tried)

    def mean(self, arm: str) -> float:
        """The arm's mean reward, shrunk by n / (n + prior): what it predicts of its next
        page."""
        record = self._arms.get(arm)
        return 0.0 if record is None else record.reward / (record.fetched + self.prior)

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


class SectionSkill:
    """How much more the sections tell of a page than its link does, measured.

    Before each fetched page is learned from, its reward is predicted twice: by its
    section's mean (`SiteValues.mean`), and by its link's score calibrated to the
    rewards of the pages fetched so far (least squares, a + b score, with forgetting).
    The skill is one minus the ratio of the two predictions' running squared errors
    (prequential, as the link model's, from the third page on), each error at least
    `noise` (rewards closer than its square root are not told apart: where no page earns
    anything, the sections' means of zero are not skill), at least 0, shrunk by
    n / (n + `shrink`) after n pages. Where a topic's words are spread thin over every
    host (on the third real web, "unicode utf-8 text encoding"), every section earns
    about the same small reward and the sections predict no better than the links: the
    skill stays near zero and the sections' values, optimism included, do not outrank
    the links' estimates."""

    def __init__(
        self, *, shrink: float = 50.0, noise: float = 1e-3, forgetting: float = 0.995
    ) -> None:
        if shrink <= 0 or noise <= 0 or not 0 < forgetting <= 1:
            raise ValueError(
                "the section skill needs shrink > 0, noise > 0 and forgetting in (0, 1], "
                f"not {shrink}, {noise}, {forgetting}"
            )
        self.shrink, self.noise, self.forgetting = shrink, noise, forgetting
        self.calibration = [0.0] * 5  # n, sum of scores, of their squares, of rewards, of products
        self.errors = [0.0, 0.0]  # the sections', the links'
        self.pages = 0

    def by_link(self, score: float) -> float:
        """The reward a link's score predicts: a + b score fitted to the pages so far."""
        n, s, ss, y, sy = self.calibration
        if n <= 0.0:
            return score
        mean_s, mean_y = s / n, y / n
        variance = ss / n - mean_s**2
        slope = (sy / n - mean_s * mean_y) / variance if variance > 1e-12 else 0.0
        return mean_y + slope * (score - mean_s)

    def learn(self, by_section: float, score: float, reward: float) -> None:
        """A fetched page: its section's prediction, its link's score, its reward."""
        f = self.forgetting
        if self.pages >= 2:
            by_link = self.by_link(score)
            self.errors = [
                f * self.errors[0] + max((reward - by_section) ** 2, self.noise),
                f * self.errors[1] + max((reward - by_link) ** 2, self.noise),
            ]
        self.calibration = [
            f * total + value
            for total, value in zip(
                self.calibration, (1.0, score, score * score, reward, score * reward), strict=True
            )
        ]
        self.pages += 1

    def value(self) -> float:
        sections, links = self.errors
        if links <= 0.0:
            return 0.0
        return max(0.0, 1.0 - sections / links) * self.pages / (self.pages + self.shrink)

    def get_state(self) -> list[float]:
        return [*self.calibration, *self.errors, self.pages]

    def set_state(self, state: list[float]) -> None:
        if len(state) != 8 or not all(math.isfinite(v) for v in state):
            raise ValueError(f"saved section skill is unreadable: {state}")
        if state[0] < 0 or state[5] < 0 or state[6] < 0 or state[7] < 0:
            raise ValueError(f"saved section skill is out of range: {state}")
        self.calibration = [float(v) for v in state[:5]]
        self.errors = [float(state[5]), float(state[6])]
        self.pages = int(state[7])
