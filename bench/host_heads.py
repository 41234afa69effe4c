"""Where a frontier's slots go, host by host, on a ground-truth web: live crawls that
print, at given pages fetched, each host's best queued URL as the frontier ranks it
(its own index, its section's bonus, its host's), and at the end each host's pages,
the mean of their relevance as the crawler scored it (the frontier's reward) and as the
ground truth has it, and the relevant pages found there.

    python bench/host_heads.py --ground-truth /tmp/realweb/truth2/regex \
        [--policy qlearning] [--repeat 3] [--at 100 200 500]

A host whose best URL ranks low while its pages earned the most is one the frontier
left for the promise of others' links; the heads say which part of the index moved it.
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import tempfile
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from crawler.experiments import CrawlSettings, TruthWeb, check_served, crawl_order
from policies.frontier import PriorityFrontier
from policies.qlearning import QLearningFrontier
from policies.registry import make_frontier_policy, register_frontier_policy, spec


def print_heads(frontier: PriorityFrontier, taken: int) -> None:
    """Each host's head: its rank, and what it is made of, best host first."""
    line = f"after {taken} pages"
    if isinstance(frontier, QLearningFrontier):
        line += (
            f": link model's skill {frontier.model.skill():.3f}, sections' weight "
            f"{frontier.section_weight:.3f}, exploring {frontier.budget.exploring}"
        )
    print(line)
    rows = []
    for host, queues in frontier._queues.items():
        key, _, _, section = frontier._best_group(queues)
        section_bonus, host_bonus = frontier.group_bonus(section), frontier.host_bonus(host)
        rank = host_bonus - key
        row = (
            f"  {host:<22} rank {rank:.4f} = own {rank - section_bonus - host_bonus:.4f}"
            f" + section {section_bonus:.4f} + host {host_bonus:.4f}; queued {queues.size}"
        )
        if isinstance(frontier, QLearningFrontier):
            values = frontier.section_values
            row += (
                f", tried {frontier.host_values.tries(host)}; best section {section!r}: "
                f"mean reward {values.mean(section):.4f} over {values.tries(section)} tries"
            )
        rows.append((rank, row))
    for _, row in sorted(rows, reverse=True):
        print(row)


def traced(policy: str, at: set[int]) -> Callable[..., PriorityFrontier]:
    """A factory of `policy`'s frontier that prints its heads as the pages in `at` are
    taken."""

    def make(**settings: Any) -> PriorityFrontier:
        frontier = make_frontier_policy(policy, **settings)
        pop, taken = frontier.pop, 0

        def pop_traced(*args: Any, **kwargs: Any) -> Any:
            nonlocal taken
            candidate = pop(*args, **kwargs)
            if candidate is not None and not candidate.revisit:
                taken += 1
                if taken in at:
                    print_heads(frontier, taken)
            return candidate

        frontier.pop = pop_traced  # type: ignore[method-assign]
        return frontier

    make.refill_order = spec("frontier", policy).refill_order  # type: ignore[attr-defined]
    return make


def print_hosts(web: TruthWeb, order: list[str], scored: dict[str, float]) -> None:
    pages, found = Counter[str](), Counter[str]()
    reward, truth = defaultdict[str, float](float), defaultdict[str, float](float)
    for url, relevance in zip(order, web.truth_of(order, len(order)), strict=True):
        host = url.split("/")[2]
        pages[host] += 1
        reward[host] += scored.get(url) or 0.0
        truth[host] += relevance
        found[host] += relevance >= web.threshold
    print(f"found {sum(found.values())} of {web.relevant} relevant pages")
    for host in sorted(pages):
        n = pages[host]
        print(
            f"  {host:<22} {n:4d} pages, mean reward {reward[host] / n:.4f}, "
            f"true relevance {truth[host] / n:.4f}, {found[host]} relevant"
        )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ground-truth", type=Path, required=True)
    parser.add_argument("--policy", default="qlearning")
    parser.add_argument("--budget", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--per-host-concurrency", type=int, default=4)
    parser.add_argument("--at", type=int, nargs="+", default=[100, 200, 300, 500, 700])
    args = parser.parse_args()
    web = TruthWeb.read(args.ground_truth)
    await check_served(web)
    traced_name = f"traced-{args.policy}"
    register_frontier_policy(traced_name, traced(args.policy, set(args.at)))
    settings = CrawlSettings(args.budget, per_host_concurrency=args.per_host_concurrency)
    for run in range(args.repeat):
        print(f"run {run}, {args.policy}", flush=True)
        with tempfile.TemporaryDirectory(prefix="host-heads-") as scratch:
            order = (await crawl_order(web, traced_name, settings, Path(scratch)))[: args.budget]
            with sqlite3.connect(Path(scratch) / f"{traced_name}.db") as db:
                scored = dict(db.execute("SELECT url, relevance FROM urls"))
        print_hosts(web, order, scored)


if __name__ == "__main__":
    asyncio.run(main())
