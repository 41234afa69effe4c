"""How few pages could any crawl fetch to reach 90% recall on a ground-truth web? Two
numbers from the graph alone, with no crawl:

- `at least`: a crawl fetches every page on a path from a seed to each relevant page it
  finds, so it fetches `need` relevant pages (90% of them) and, for the relevant page
  it finds whose cheapest path holds the most pages that are not relevant, those too;
  no crawl can fetch fewer.
- `omniscient`: the pages of a crawl that knows the whole graph and relevance and takes,
  again and again, the relevant page fewest new pages away (the path's pages with it),
  until it has `need`: a crawl that can be made, so the fewest pages are at most this
  many (a greedy Steiner arborescence: it can miss the optimum, never undercut it).

Between them lies the best any order can do; the orders that know a link's page, or one
step beyond it, are crawled by `bench/clairvoyant.py`.

    python bench/realweb/fewest_pages.py --ground-truth /tmp/realweb3/truth/sql \
        [--ground-truth DIR ...]
"""

from __future__ import annotations

import argparse
import math
from collections import deque
from pathlib import Path

import numpy as np

from crawler.experiments import RECALL_TARGET, TruthWeb
from crawler.reporting.ground_truth import read_graph
from policies.link_graph import LinkGraph

UNREACHED = np.iinfo(np.int64).max


def pages_needed(relevant: int) -> int:
    """The relevant pages a crawl must find for 90% recall."""
    return math.ceil(RECALL_TARGET * relevant - 1e-9)


class Links:
    """A graph's links as Python lists, read once for the many searches of a bound."""

    def __init__(self, graph: LinkGraph) -> None:
        self.pages = graph.pages
        self.starts: list[int] = graph.link_start.tolist()
        self.targets: list[int] = graph.link_target.tolist()


def cheapest_paths(
    links: Links, free: np.ndarray, roots: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """For every page, the fewest pages that are not `free` on a path from a root to it
    (its own included), and its predecessor on one such path (-1 at a root): a 0-1
    breadth-first search, a free page weighing 0."""
    free_list = free.tolist()
    cost_list = [UNREACHED] * links.pages
    before_list = [-1] * links.pages
    queue: deque[int] = deque()
    for root in roots.tolist():
        weight = 0 if free_list[root] else 1
        if weight < cost_list[root]:
            cost_list[root] = weight
            queue.appendleft(root) if weight == 0 else queue.append(root)
    starts, targets = links.starts, links.targets
    while queue:
        page = queue.popleft()
        here = cost_list[page]
        for target in targets[starts[page] : starts[page + 1]]:
            weight = 0 if free_list[target] else 1
            if here + weight < cost_list[target]:
                cost_list[target] = here + weight
                before_list[target] = page
                queue.appendleft(target) if weight == 0 else queue.append(target)
    return np.array(cost_list, dtype=np.int64), np.array(before_list, dtype=np.int64)


def at_least(graph: LinkGraph, relevant: np.ndarray, need: int) -> int:
    """No crawl reaches `need` of the `relevant` pages (a mask) with fewer pages."""
    cost, _ = cheapest_paths(Links(graph), relevant, graph.seeds)
    reached = np.sort(cost[relevant & (cost < UNREACHED)])
    if len(reached) < need:
        return UNREACHED
    return need + int(reached[need - 1])


def omniscient_order(graph: LinkGraph, relevant: np.ndarray, need: int) -> list[int]:
    """A crawl's order that reaches `need` of the `relevant` pages (a mask): each time,
    the path to the relevant page fewest new pages away, from the seeds or a page
    fetched already, ties to the lower page number. Stops short where they are not
    reachable."""
    links = Links(graph)
    fetched = np.zeros(graph.pages, dtype=bool)
    order: list[int] = []
    found = 0
    while found < need:
        # a fetched page's links are known: it roots the next path at no cost
        roots = np.concatenate([graph.seeds, np.flatnonzero(fetched)])
        cost, before = cheapest_paths(links, fetched, roots)
        cost[~relevant | fetched] = UNREACHED
        nearest = int(np.argmin(cost))
        if cost[nearest] == UNREACHED:
            break
        path = [nearest]
        while before[path[-1]] >= 0 and not fetched[before[path[-1]]]:
            path.append(int(before[path[-1]]))
        for page in reversed(path):
            fetched[page] = True
            order.append(page)
            found += bool(relevant[page])
    return order


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ground-truth", type=Path, action="append", required=True)
    parser.add_argument("--truth-threshold", type=float, help="else the truth's threshold.txt")
    args = parser.parse_args()
    print("| topic | pages | relevant | 90% | at least | omniscient |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for directory in args.ground_truth:
        web = TruthWeb.read(directory, args.truth_threshold)
        graph = read_graph(directory)
        relevant = graph.relevance >= web.threshold
        need = pages_needed(int(relevant.sum()))
        low = at_least(graph, relevant, need)
        order = omniscient_order(graph, relevant, need)
        reached = int(relevant[order].sum()) >= need
        cells = [
            directory.name,
            f"{int(graph.reachable().sum()):,}",
            f"{int(relevant.sum()):,}",
            f"{need:,}",
            f"{low:,}" if low < UNREACHED else "not reachable",
            f"{len(order):,}" if reached else "not reachable",
        ]
        print("| " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
