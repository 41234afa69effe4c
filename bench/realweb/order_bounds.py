"""How well can any order do on a ground-truth web? Pages to 90% recall of one host's
relevant pages, crawling that host alone from its seeds, for orders that know more than
a crawler can:

- `oracle`: each link ranked by its target's true relevance (an order that knows every
  page before fetching it);
- `parents max` / `parents mean`: each link ranked by the true relevance of the fetched
  pages that link to it (the most a crawler could learn from where a link is found);
- `random`: links in a random order.

The middle two bound what a link's surroundings can tell on that host: on `git`'s
git-doc, whose pages are nearly all about git, they take about a tenth fewer pages than a
random order. Each order's ties are broken at random, several times.

    python bench/realweb/order_bounds.py --ground-truth /tmp/realweb/truth/git \
        --host 127.0.0.17:8800
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

from crawler.experiments import RECALL_TARGET, TruthWeb
from crawler.reporting.ground_truth import read_graph
from policies.link_graph import LinkGraph


def pages_to_target(
    graph: LinkGraph,
    on_host: set[int],
    relevant: set[int],
    rank: Callable[[int, list[float]], float],
    rng: random.Random,
) -> float:
    """Pages of `on_host` fetched from its seeds, best rank first, until 90% of
    `relevant` are; inf if never."""
    need = math.ceil(RECALL_TARGET * len(relevant) - 1e-9)
    parents: dict[int, list[float]] = defaultdict(list)
    seeds = [int(seed) for seed in graph.seeds if seed in on_host]
    tie = {seed: rng.random() for seed in seeds}
    queued, fetched, found = set(seeds), set(), 0
    while queued:
        page = max(queued, key=lambda p: (rank(p, parents[p]), tie[p]))
        queued.discard(page)
        fetched.add(page)
        found += page in relevant
        if found >= need:
            return float(len(fetched))
        for target in graph.links_of(page).tolist():
            if target in fetched or target not in on_host:
                continue
            parents[target].append(float(graph.relevance[page]))
            if target not in tie:
                tie[target] = rng.random()
                queued.add(target)
    return math.inf


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ground-truth", type=Path, required=True)
    parser.add_argument("--host", required=True, help="host:port of the host crawled alone")
    parser.add_argument("--repeat", type=int, default=5, help="tie orders of each order")
    args = parser.parse_args()

    web = TruthWeb.read(args.ground_truth)
    graph = read_graph(args.ground_truth)  # pages numbered in pages.tsv's order
    on_host = {i for i, url in enumerate(web.relevance) if urlsplit(url).netloc == args.host}
    if not on_host:
        parser.error(f"no page of host {args.host!r} in {args.ground_truth}")
    relevant = {i for i in on_host if graph.relevance[i] >= web.threshold}
    orders: dict[str, Callable[[int, list[float]], float]] = {
        "oracle": lambda page, _: float(graph.relevance[page]),
        "parents max": lambda _, found: max(found, default=0.0),
        "parents mean": lambda _, found: statistics.fmean(found) if found else 0.0,
        "random": lambda _, __: 0.0,
    }
    print(
        f"host {args.host}: {len(on_host)} pages, {len(relevant)} relevant "
        f"(>= {web.threshold}); pages to 90% of them, {args.repeat} tie orders:"
    )
    for name, rank in orders.items():
        runs = [
            pages_to_target(graph, on_host, relevant, rank, random.Random(seed))
            for seed in range(args.repeat)
        ]
        print(f"  {name:13} median {statistics.median(runs):6.0f}  runs {runs}")


if __name__ == "__main__":
    main()
