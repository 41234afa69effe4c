"""When a Q-learning crawl's exploration budget turns: one live crawl of a ground-truth
web, and the budget's state at each page where it starts or stops affording exploring,
and every `--every` pages between.

    python bench/budget_turns.py --ground-truth /tmp/realweb4/truth/cursor \
        [--budget 1200] [--per-host-concurrency 4] [--variant qlearning] [--every 100]

Prints the crawl's recall, its pages by host, and a row per page counted: the pages
learned from, whether the budget affords exploring, what the crawl earned, what the
baseline is counted to have earned, the baseline's rate and the pages taken not
exploring. A crawl whose budget turns off and stays off is one whose earnings stay
short of (1 - alpha) of the baseline's.
"""

from __future__ import annotations

import asyncio
from typing import Any

from focus_ablations import VARIANTS
from patience_waits import crawl_parser, crawl_traced

from policies import PriorityFrontier
from policies.qlearning import QLearningFrontier

ROWS: list[tuple[int, bool, bool, float, float, float, int]] = []


def traced(make: Any, every: int) -> Any:
    """A frontier of `make` whose budget's state is kept where it turns."""

    def factory(**settings: Any) -> PriorityFrontier:
        frontier = make(**settings)
        assert isinstance(frontier, QLearningFrontier)
        budget = frontier.budget
        count = budget.fetched
        learned = 0

        def fetched(url_id: int, reward: float) -> bool:
            nonlocal learned
            turned = count(url_id, reward)
            learned += 1
            if turned or learned % every == 0:
                state = (budget.earned, budget.baseline, budget.baseline_rate)
                ROWS.append((learned, turned, budget.exploring, *state, budget.baseline_pages))
            return turned

        budget.fetched = fetched  # type: ignore[method-assign]
        return frontier

    return factory


async def main() -> None:
    parser = crawl_parser(__doc__, 1200)
    parser.add_argument("--every", type=int, default=100)
    args = parser.parse_args()
    if args.every < 1:
        parser.error(f"--every must be at least 1, not {args.every}")
    await crawl_traced(args, traced(VARIANTS[args.variant], args.every))
    print("learned  turned  exploring  earned  baseline  rate  pages not exploring")
    for learned, turned, exploring, earned, baseline, rate, pages in ROWS:
        mark = "turned" if turned else ""
        print(f"{learned:7d}  {mark:6s}  {exploring!s:9s}  {earned:6.3f}  {baseline:8.3f}", end="")
        print(f"  {rate:.4f}  {pages}")


if __name__ == "__main__":
    asyncio.run(main())
