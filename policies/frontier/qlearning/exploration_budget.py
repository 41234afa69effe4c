"""How much the Q-learning frontier may explore: a conservative bandit's budget.

The hosts' and sections' optimism (`SiteValues`) and the patience that waits for a host
its pages have not shown richer than the ready one are what take the frontier away from
best-first's order before it has learned anything: a try of a host whose first links
promise nothing is a page best-first would have spent on its best link. On the real webs
of `bench/realweb` the first hundred pages went to hosts and sections barely tried, and
on some topics a relevant page or a few that best-first finds there were found later in
every round; late in a crawl, once the sections weigh nothing, hosts were taken by their
tries alone.

Wu, Shariff, Lattimore and Szepesvari ("Conservative Bandits", ICML 2016) let a learner
explore only while the reward it has earned stays at least 1 - alpha of what a baseline
policy would have earned in as many steps, whatever the exploration then brings. Here
the baseline is best-first's order, the frontier's order with no optimism, patient only
for a host whose pages earned more. A page taken while not exploring is the baseline's
own: it counts in both sums at its reward, as the paper's learner earns the baseline's
reward when it plays the baseline's action. A page taken while exploring counts in the
baseline's sum at the baseline's rate, the running mean reward of the pages taken
while not exploring (the recent `memory` of them: a crawl's rewards fall as its best
links are used up). The budget allows exploring while

    earned  >=  (1 - alpha) * baseline

(alpha 0.1) and only once `warmup` pages taken without exploring have been fetched
(100): until then the frontier orders as best-first (the link model and the sections'
skill are zero before they are shown). A try that finds a rich host (SciPy's on
"sparse matrix") earns more than the baseline would have and the budget grows; tries
that earn nothing use it up, and the frontier goes back to best-first's order until
alpha of its pages' rewards make the shortfall up, however far those rewards fell.
The rewards are eq. (11)'s, a fetched page's relevance; a page is counted as it is
learned from, so the pages in flight count in neither sum.

Why its own pages at their rewards: counted at the running mean, which lags a crawl's
falling rewards, each of them added more to the baseline than it earned, and a crawl a
little short of exploring when its rewards fell stayed short for good (on
`bench/realweb`'s "database connection cursor", exploring stopped at page 118 and
never came back in some crawls, which then left Celery's host, a third of the relevant
pages, untried; `git show 810f12e:bench/budget_turns.py`). Why alpha 0.1: with the pages counted so,
exploring resumes as soon as alpha of the baseline's rewards make its cost up, and at
0.3 its optimism took the slots that patience kept on the richest host (`mvcc`: 0.739
of the relevant pages at 500 pages against 0.826 with the running mean, in the same
round; `git show 810f12e:docs/focus.md`).

Why a hundred pages: the budget bounds what exploring costs by alpha, in reward, not
by zero. Exploring from the tenth page on, the crawl gave up to half of its first
hundred pages to hosts barely tried, and on some topics of `bench/realweb` lost, in
nearly every crawl, a relevant page that best-first finds within 100 (`asyncio`,
`unicode`). Exploring from the hundredth on, its recall is behind best-first's no more
often than best-first's is behind itself, crawl against crawl
(`bench/pool_focus_rounds.py`); what exploring finds comes later (SciPy's host on
"sparse matrix").
"""

from __future__ import annotations

import math
from collections.abc import Sequence


class ExplorationBudget:
    def __init__(self, *, alpha: float = 0.1, warmup: int = 100, memory: int = 50) -> None:
        if not 0 <= alpha <= 1 or warmup < 0 or memory < 1:
            raise ValueError(
                "the exploration budget needs alpha in [0, 1], warmup >= 0 and memory >= 1, "
                f"not {alpha}, {warmup}, {memory}"
            )
        self.alpha, self.warmup, self.memory = alpha, warmup, memory
        self.earned = 0.0  # the rewards of the pages fetched
        self.baseline = 0.0  # what the baseline is counted to have earned on them
        self.baseline_rate = 0.0  # running mean reward of the pages taken not exploring
        self.baseline_pages = 0
        self.exploring = self._affordable()
        self._taken: dict[int, bool] = {}  # by URL id in flight: taken while exploring

    def taken(self, url_id: int) -> None:
        self._taken[url_id] = self.exploring

    def forget(self, url_id: int) -> None:
        """A URL taken will not be learned from."""
        self._taken.pop(url_id, None)

    def fetched(self, url_id: int, reward: float) -> bool:
        """Count the reward of a page taken from the frontier; whether `exploring`
        turned."""
        exploring = self._taken.pop(url_id, None)
        if exploring is None:  # taken before the crawl was resumed: not counted
            return False
        if not exploring:
            self.baseline_pages += 1
            n = min(self.baseline_pages, self.memory)
            self.baseline_rate += (reward - self.baseline_rate) / n
        self.earned += reward
        self.baseline += self._baseline_reward(reward, own=not exploring)
        affordable = self._affordable()
        turned, self.exploring = affordable != self.exploring, affordable
        return turned

    def _baseline_reward(self, reward: float, *, own: bool) -> float:
        """What the baseline is counted to have earned on the page just fetched: a page
        taken not exploring is its own and earned its reward; for one taken exploring,
        the baseline's rate (which only the baseline's own pages move)."""
        return reward if own else self.baseline_rate

    @property
    def warming_up(self) -> bool:
        """Fewer than `warmup` pages taken without exploring are fetched yet."""
        return self.baseline_pages < self.warmup

    def _affordable(self) -> bool:
        return not self.warming_up and self.earned >= (1 - self.alpha) * self.baseline

    def get_state(self) -> list[float]:
        return [self.earned, self.baseline, self.baseline_rate, self.baseline_pages]

    def set_state(self, state: Sequence[float]) -> None:
        earned, baseline, rate, pages = (float(value) for value in state)
        if not all(math.isfinite(value) for value in (earned, baseline, rate)) or pages < 0:
            raise ValueError("saved exploration budget is out of range")
        self.earned, self.baseline, self.baseline_rate = earned, baseline, rate
        self.baseline_pages = int(pages)
        self.exploring = self._affordable()
