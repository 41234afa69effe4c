"""How well can any order do on a ground-truth web? Pages to 90% recall of one host's
relevant pages, crawling that host alone from its seeds, for orders that know more than
a crawler can:

- `oracle`: each link ranked by its target's true relevance (an order that knows every
  page before fetching it);
- `parents max` / `parents mean`: each link ranked by the true relevance of the fetched
  pages that link to it (the most a crawler could learn from where a link is found);
- `random`: links in a random order.

The last two bound what a link's surroundings can tell on that host: on `git`'s git-doc,
whose pages are nearly all about git, they are close to random. Each order's ties are
broken at random, several times.

    python bench/realweb/order_bounds.py --ground-truth /tmp/realweb/truth/git \
        --host 127.0.0.17:8800
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path

from crawler.experiments import RECALL_TARGET, TruthWeb


def read_links(directory: Path, pages: set[str]) -> dict[str, list[str]]:
    links: dict[str, list[str]] = defaultdict(list)
    with (directory / "links.tsv").open(encoding="utf-8") as lines:
        next(lines)
        for line in lines:
            source, _, target = line.rstrip("\n").partition("\t")
            if target in pages and target != source:
                links[source].append(target)
    return links


def pages_to_target(
    seeds: Sequence[str],
    links: dict[str, list[str]],
    relevance: dict[str, float],
    relevant: set[str],
    rank: Callable[[str, list[float]], float],
    rng: random.Random,
) -> float:
    """Pages fetched, best rank first, until 90% of `relevant` are; inf if never."""
    need = math.ceil(RECALL_TARGET * len(relevant) - 1e-9)
    parents: dict[str, list[float]] = defaultdict(list)
    tie = {seed: rng.random() for seed in seeds}
    queued, fetched, found = set(seeds), set(), 0
    while queued:
        url = max(queued, key=lambda u: (rank(u, parents[u]), tie[u]))
        queued.discard(url)
        fetched.add(url)
        found += url in relevant
        if found >= need:
            return float(len(fetched))
        for target in dict.fromkeys(links[url]):  # each once, in the page's order
            if target in fetched or target not in relevance:
                continue
            parents[target].append(relevance[url])
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
    relevance = {u: v for u, v in web.relevance.items() if f"//{args.host}/" in u}
    if not relevance:
        parser.error(f"no page of host {args.host!r} in {args.ground_truth}")
    relevant = {u for u, v in relevance.items() if v >= web.threshold}
    seeds = [s for s in web.seeds if f"//{args.host}/" in s]
    links = read_links(args.ground_truth, set(relevance))
    orders: dict[str, Callable[[str, list[float]], float]] = {
        "oracle": lambda url, _: relevance[url],
        "parents max": lambda _, found: max(found, default=0.0),
        "parents mean": lambda _, found: statistics.fmean(found) if found else 0.0,
        "random": lambda _, __: 0.0,
    }
    print(
        f"host {args.host}: {len(relevance)} pages, {len(relevant)} relevant "
        f"(>= {web.threshold}); pages to 90% of them, {args.repeat} tie orders:"
    )
    for name, rank in orders.items():
        runs = [
            pages_to_target(seeds, links, relevance, relevant, rank, random.Random(seed))
            for seed in range(args.repeat)
        ]
        print(f"  {name:13} median {statistics.median(runs):6.0f}  runs {runs}")


if __name__ == "__main__":
    main()
