"""How far a frontier's order can get on a ground-truth web when it knows what each
queued link leads to: pages to 90% recall, and recall at 100 / 500 / 1,000 pages, of
live crawls ordered by the true relevance of each queued URL's page, beside best-first's.

    python bench/clairvoyant.py --ground-truth /tmp/realweb/truth/git \
        [--budget 3000] [--repeat 3] [--per-host-concurrency 4]

`clairvoyant` ranks each queued URL by its page's true relevance (the ground truth's
cosine), as a link model that predicts a link's page without error would;
`clairvoyant-patient` waits, as qlearning does, while a busy host holds a URL ranked more
than twice as high as the best ready one. Neither knows what lies beyond the queue: a
relevant page linked only from pages that are not relevant is reached as late as the
order reaches its parents. Where even they need more than half of best-first's pages to
reach 90% recall, ranking a link by its page alone, however well predicted, does not
meet that target; what is left is to value, from a link, the pages beyond it.

`lookahead` and `lookahead-patient` (the same patience) know one step further: a URL is
ranked by its page's true relevance plus half the best true relevance of the pages it
links to (eq. (10)'s target with gamma 0.5 and the revealed children's value taken
without error, the best child alone, whether or not the crawl knows it already).
"""

from __future__ import annotations

import argparse
import asyncio
import math
import statistics
from collections.abc import Mapping
from pathlib import Path

from crawler.experiments import CrawlSettings, TruthWeb, live_experiment
from crawler.reporting.ground_truth import read_graph, read_relevance
from policies import register_frontier_policy
from policies.frontier import BestFirst, Candidate


class Clairvoyant(BestFirst):
    """Best-first's order by each URL's true relevance instead of its link's score."""

    name = "clairvoyant"

    def __init__(self, truth: Mapping[str, float], **kw: object) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]
        self.truth = truth

    def priority(self, candidate: Candidate) -> float:
        return self.truth.get(candidate.url, 0.0)


ORDERS = (
    "best-first",
    "clairvoyant",
    "clairvoyant-patient",
    "lookahead",
    "lookahead-patient",
)
LOOKAHEAD_GAMMA = 0.5  # the discount of the best child's relevance, qlearning's gamma


def lookahead_values(ground_truth: Path, gamma: float = LOOKAHEAD_GAMMA) -> dict[str, float]:
    """Each page's true relevance plus gamma times the best true relevance of the pages
    it links to."""
    relevance = read_relevance(ground_truth / "pages.tsv")
    graph = read_graph(ground_truth)
    values = list(relevance.values())
    return {
        url: values[page]
        + gamma * max((values[child] for child in graph.links_of(page)), default=0.0)
        for page, url in enumerate(relevance)
    }


def pages_to_90(runs: list[dict[str, float]]) -> str:
    values = sorted(run["pages_to_90"] for run in runs)
    median = statistics.median(values)
    shown = ", ".join("none" if math.isinf(v) else f"{v:,.0f}" for v in values)
    return f"{'not reached' if math.isinf(median) else f'{median:,.0f}'} ({shown})"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ground-truth", type=Path, required=True)
    parser.add_argument("--budget", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--per-host-concurrency", type=int, default=4)
    parser.add_argument(
        "--policies",
        nargs="+",
        choices=ORDERS,
        default=list(ORDERS),
        help="the orders crawled, interleaved (default: all)",
    )
    args = parser.parse_args()
    web = TruthWeb.read(args.ground_truth, None)
    truth = web.relevance
    register_frontier_policy("clairvoyant", lambda **kw: Clairvoyant(truth, **kw))
    register_frontier_policy(
        "clairvoyant-patient", lambda **kw: Clairvoyant(truth, **{**kw, "patience": 0.5})
    )
    beyond = lookahead_values(args.ground_truth)
    register_frontier_policy("lookahead", lambda **kw: Clairvoyant(beyond, **kw))
    register_frontier_policy(
        "lookahead-patient", lambda **kw: Clairvoyant(beyond, **{**kw, "patience": 0.5})
    )
    cutoffs = [f"recall@{n}" for n in (100, 500, 1000) if n <= args.budget]
    settings = CrawlSettings(args.budget, per_host_concurrency=args.per_host_concurrency)
    results = await live_experiment(
        web,
        args.policies,
        repeat=args.repeat,
        settings=settings,
        on_run=lambda policy, run, m: print(
            f"run {run} {policy}: pages to 90% {m['pages_to_90']:.0f}, recall "
            + " / ".join(f"{m[k]:.3f}" for k in cutoffs),
            flush=True,
        ),
    )
    print(f"{args.ground_truth.name}: {web.relevant} relevant pages")
    for policy, runs in results.runs.items():
        recall = " / ".join(f"{statistics.median(run[k] for run in runs):.3f}" for k in cutoffs)
        print(f"{policy:20s} pages to 90%: {pages_to_90(runs):32s} recall: {recall}")


if __name__ == "__main__":
    asyncio.run(main())
