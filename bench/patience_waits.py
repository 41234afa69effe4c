"""Why a Q-learning crawl's slots wait or not: one live crawl of a ground-truth web, and
at each pop where a busy host's best URL outranks the best ready one, the frontier's
verdict and, where it does not wait, why.

    python bench/patience_waits.py --ground-truth /tmp/realweb2/truth/mvcc \
        [--budget 1500] [--per-host-concurrency 4] [--variant qlearning]

`--variant patient-while-exploring` traces the patience spent from the exploration
budget alone (`bench/focus_ablations.py`). Prints the crawl's recall, its pages by
host, and the pops counted by verdict: waited; the ready URL ranked at least
`patience` times the busy host's best; or not waited for these reasons (the warmup's
pages, the budget not affording exploring, the ready host barely tried, the busy host's
pages poorer than the crawl's or than the ready host's).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import tempfile
from pathlib import Path
from typing import Any

from focus_ablations import VARIANTS

from crawler.experiments import CrawlSettings, TruthWeb, check_served, crawl_order, focus
from policies import PriorityFrontier, register_frontier_policy
from policies.qlearning import QLearningFrontier

VERDICTS: collections.Counter[str] = collections.Counter()


def reasons(frontier: QLearningFrontier, host: str, awaited_host: str) -> str:
    """Why a slot of `host` did not wait for `awaited_host`, its URL ranked low enough."""
    budget, recent = frontier.budget, frontier._recent_reward
    tries = frontier.host_values.tries
    awaited = recent.get(awaited_host)
    found = []
    if budget.warming_up:
        found.append("warmup")
    elif not budget.exploring:
        found.append("budget not exploring")
    if tries(host) < frontier.patient_after:
        found.append("ready host barely tried")
    if awaited is None or awaited < frontier.reward_rate:
        found.append("busy host poorer than the crawl")
    elif awaited < recent.get(host, 0.0):
        found.append("busy host poorer than the ready one")
    return ", ".join(found) or "other"


def traced(make: Any) -> Any:
    """A frontier of `make` whose waiting verdicts are counted."""

    def factory(**settings: Any) -> PriorityFrontier:
        frontier = make(**settings)
        assert isinstance(frontier, QLearningFrontier)
        judge = frontier._worth_waiting

        def worth_waiting(host: str, rank: float, awaited_host: str, awaited_rank: float) -> bool:
            verdict = judge(host, rank, awaited_host, awaited_rank)
            if verdict:
                VERDICTS["waited"] += 1
            elif not rank < frontier.patience * awaited_rank:
                VERDICTS["ranked high enough"] += 1
            else:
                VERDICTS["not waited: " + reasons(frontier, host, awaited_host)] += 1
            return verdict

        frontier._worth_waiting = worth_waiting  # type: ignore[method-assign]
        return frontier

    return factory


def crawl_parser(description: str | None, budget: int) -> argparse.ArgumentParser:
    """The arguments of a traced crawl: its web, its pages, its requests a host and the
    variant of qlearning it traces."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--ground-truth", type=Path, required=True)
    parser.add_argument("--budget", type=int, default=budget)
    parser.add_argument("--per-host-concurrency", type=int, default=4)
    parser.add_argument("--variant", choices=list(VARIANTS), default="qlearning")
    return parser


async def crawl_traced(args: argparse.Namespace, factory: Any) -> None:
    """One crawl of the ground-truth web by the frontiers `factory` makes; prints its
    recall and its pages by host."""
    register_frontier_policy("traced", factory)
    web = TruthWeb.read(args.ground_truth, None)
    await check_served(web)
    settings = CrawlSettings(args.budget, per_host_concurrency=args.per_host_concurrency)
    with tempfile.TemporaryDirectory(prefix="traced-crawl-") as scratch:
        order = await crawl_order(web, "traced", settings, Path(scratch))
    report = focus(web.truth_of(order, args.budget), web, args.budget)
    print(" ".join(f"{k}={v:.3f}" for k, v in report.items() if k.startswith(("recall", "pages"))))
    print(f"relevant pages by host: {web.relevant_by_host()}")
    spent = web.pages_by_host(order, args.budget)
    print(f"pages fetched by host: { {host: n for host, (n, _) in spent.items()} }")


async def main() -> None:
    args = crawl_parser(__doc__, 1500).parse_args()
    await crawl_traced(args, traced(VARIANTS[args.variant]))
    for verdict, count in VERDICTS.most_common():
        print(f"{count:6d} {verdict}")


if __name__ == "__main__":
    asyncio.run(main())
