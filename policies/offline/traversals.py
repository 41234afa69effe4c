"""Crawls replayed over a known graph, traversal after traversal (O'Meara & Patel, Section 6).

Each traversal starts from the seeds with nothing fetched and fetches, one page a step,
until every reachable page is fetched; a page is known once a fetched page links to
it. The schedule's P (eq. 3, freshness 1) is reported as a fraction of the upper bound.
Learning policies keep what they learned from one traversal to the next.

Policies:
- `bfs`: shallowest first, then in order of discovery;
- `best-first`: the paper's fringe greedy, the known page of highest relevance first
  (given each page's true relevance, as the paper's was: an oracle of the next reward);
- `random`: a uniformly chosen known page;
- `qlearning`: the Whittle index of eq. (9)-(10), the state the discovering page
  (`state="discoverer"`, the paper's) or the link's features (`state="links"`; the
  link's estimated relevance is its true relevance, as best-first is given).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from policies.frontier.qlearning.link_model import LinkContextModel, Row
from policies.frontier.qlearning.link_tokens import link_tokens
from policies.frontier.qlearning.table import DiscovererTable, LearningSettings
from policies.offline.link_graph import LinkGraph
from policies.offline.quality import schedule_performance, upper_bound

TRAVERSAL_POLICIES = ("qlearning", "best-first", "bfs", "random")
STATES = ("discoverer", "links")
REORDER_EVERY = 100  # fetches between re-ranking the frontier by a generalising model


@dataclass(frozen=True)
class TraversalReport:
    policy: str
    p_over_upper: list[float]
    reachable_pages: int
    links: int
    upper_bound: float


class _Replay:
    """The state of one traversal: what is known, fetched, and queued by priority."""

    def __init__(self, graph: LinkGraph) -> None:
        n = graph.pages
        self.graph = graph
        self.known = np.zeros(n, dtype=bool)
        self.fetched = np.zeros(n, dtype=bool)
        self.discoverer = np.full(n, -1, dtype=np.int64)
        self.depth = np.zeros(n, dtype=np.int64)
        self.heap: list[tuple[float, int, int]] = []
        self.taken_out_of_order = 0  # heap entries fetched by exploration, still in the heap
        self.sequence = 0

    def push(self, page: int, priority: float) -> None:
        heapq.heappush(self.heap, (-priority, self.sequence, page))
        self.sequence += 1

    def take(self, rng: np.random.Generator, explore: bool) -> int | None:
        """Fetch the best known page, or with `explore` a random one; None when done."""
        heap, fetched = self.heap, self.fetched
        if explore:
            while len(heap) > self.taken_out_of_order:
                page = heap[int(rng.integers(len(heap)))][2]
                if not fetched[page]:
                    fetched[page] = True
                    self.taken_out_of_order += 1
                    if 2 * self.taken_out_of_order > len(heap):
                        self._compact()
                    return page
        while heap:
            page = heapq.heappop(heap)[2]
            if not fetched[page]:
                fetched[page] = True
                return page
            self.taken_out_of_order -= 1
        return None

    def reorder(self, priorities: Callable[[np.ndarray], np.ndarray]) -> None:
        pages = np.array(
            [page for _, _, page in self.heap if not self.fetched[page]], dtype=np.int64
        )
        keys = priorities(pages) if len(pages) else np.zeros(0)
        self.heap = [
            (-float(k), i, int(p)) for i, (k, p) in enumerate(zip(keys, pages, strict=True))
        ]
        heapq.heapify(self.heap)
        self.taken_out_of_order = 0

    def _compact(self) -> None:
        self.heap = [entry for entry in self.heap if not self.fetched[entry[2]]]
        heapq.heapify(self.heap)
        self.taken_out_of_order = 0


class _Orderer:
    """How a policy ranks known pages and what it learns from each fetch."""

    learns = False
    reorders = False
    always_explores = False  # every fetch a uniformly chosen known page

    def priorities(self, replay: _Replay, pages: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def start(self, replay: _Replay) -> None:
        """A traversal begins: the seeds are known, nothing is fetched."""

    def taken(self, replay: _Replay, page: int) -> None:
        """`page` is about to be fetched."""

    def discovered(self, replay: _Replay, page: int, new: np.ndarray) -> None:
        """Fetching `page` revealed `new`, not yet pushed."""

    def learn(
        self, replay: _Replay, page: int, new: np.ndarray, new_priorities: np.ndarray
    ) -> None:
        """Called after `page` is fetched and its `new` children pushed."""


class _BreadthFirst(_Orderer):
    def priorities(self, replay: _Replay, pages: np.ndarray) -> np.ndarray:
        return -replay.depth[pages].astype(np.float64)


class _BestFirst(_Orderer):
    def priorities(self, replay: _Replay, pages: np.ndarray) -> np.ndarray:
        return replay.graph.relevance[pages]


class _Random(_Orderer):
    always_explores = True

    def priorities(self, replay: _Replay, pages: np.ndarray) -> np.ndarray:
        return np.zeros(len(pages))


class _DiscovererQ(_Orderer):
    learns = True

    def __init__(self, settings: LearningSettings) -> None:
        self.table = DiscovererTable(settings)

    def priorities(self, replay: _Replay, pages: np.ndarray) -> np.ndarray:
        index = self.table.index
        return np.array(
            [
                index(page, parent)
                for page, parent in zip(
                    pages.tolist(), replay.discoverer[pages].tolist(), strict=True
                )
            ]
        )

    def learn(
        self, replay: _Replay, page: int, new: np.ndarray, new_priorities: np.ndarray
    ) -> None:
        reward = float(replay.graph.relevance[page])
        self.table.update(page, int(replay.discoverer[page]), reward, float(new_priorities.sum()))


class _LinkQ(_Orderer):
    """The generalising state on a graph without words: a link's host, depth and
    parent's relevance, and its score (the page's true relevance, as best-first's)."""

    learns = True
    reorders = True

    def __init__(self, settings: LearningSettings, graph: LinkGraph) -> None:
        self.settings = settings
        self.model = LinkContextModel(n_features=2**12)
        self.rows: list[Row] = [(np.zeros(0, dtype=np.int64), np.zeros(0))] * graph.pages
        self.subsidy = 0.0

    def start(self, replay: _Replay) -> None:
        self._describe(replay, replay.graph.seeds, parent=None)

    def _describe(self, replay: _Replay, pages: np.ndarray, parent: int | None) -> None:
        graph = replay.graph
        relevance = None if parent is None else float(graph.relevance[parent])
        tokens = [
            link_tokens(
                url="",
                host=str(graph.host[page]),
                depth=int(replay.depth[page]),
                anchor="",
                around="",
                parent_title="",
                parent_relevance=relevance,
            )
            for page in pages.tolist()
        ]
        for page, row in zip(pages.tolist(), self.model.features(tokens), strict=True):
            self.rows[page] = row

    def priorities(self, replay: _Replay, pages: np.ndarray) -> np.ndarray:
        rows = [self.rows[page] for page in pages.tolist()]
        return self.model.index(rows, replay.graph.relevance[pages])

    def learn(
        self, replay: _Replay, page: int, new: np.ndarray, new_priorities: np.ndarray
    ) -> None:
        offset, slope = self.model.calibration()
        gains = np.maximum(0.0, offset + slope * new_priorities - self.subsidy)
        reward = float(replay.graph.relevance[page])
        target = reward + self.settings.gamma * float(np.sort(gains)[-10:].sum())
        self.model.update(self.rows[page], reward, target)

    def taken(self, replay: _Replay, page: int) -> None:
        offset, slope = self.model.calibration()
        value = offset + slope * float(self.priorities(replay, np.array([page]))[0])
        self.subsidy = 0.9 * self.subsidy + 0.1 * value

    def discovered(self, replay: _Replay, page: int, new: np.ndarray) -> None:
        self._describe(replay, new, parent=page)


def traverse(
    graph: LinkGraph, orderer: _Orderer, rng: np.random.Generator, *, epsilon: float
) -> np.ndarray:
    """One traversal: the pages in the order fetched."""
    replay = _Replay(graph)
    seeds = graph.seeds
    replay.known[seeds] = True
    orderer.start(replay)
    for page, priority in zip(
        seeds.tolist(), orderer.priorities(replay, seeds).tolist(), strict=True
    ):
        replay.push(page, priority)
    order: list[int] = []
    while True:
        explore = orderer.always_explores or (epsilon > 0 and rng.random() < epsilon)
        page = replay.take(rng, explore)
        if page is None:
            break
        order.append(page)
        orderer.taken(replay, page)
        links = graph.links_of(page)
        new = links[~replay.known[links]].astype(np.int64)
        replay.known[new] = True
        replay.discoverer[new] = page
        replay.depth[new] = replay.depth[page] + 1
        orderer.discovered(replay, page, new)
        priorities = orderer.priorities(replay, new)
        for child, priority in zip(new.tolist(), priorities.tolist(), strict=True):
            replay.push(child, priority)
        if orderer.learns:
            orderer.learn(replay, page, new, priorities)
        if orderer.reorders and len(order) % REORDER_EVERY == 0:
            replay.reorder(lambda pages: orderer.priorities(replay, pages))
    return np.array(order, dtype=np.int64)


def make_orderer(
    policy: str, graph: LinkGraph, settings: LearningSettings, state: str = "discoverer"
) -> _Orderer:
    if policy == "bfs":
        return _BreadthFirst()
    if policy == "best-first":
        return _BestFirst()
    if policy == "random":
        return _Random()
    if policy == "qlearning":
        if state == "discoverer":
            return _DiscovererQ(settings)
        if state == "links":
            return _LinkQ(settings, graph)
        raise ValueError(f"unknown state representation {state!r} (known: {', '.join(STATES)})")
    raise ValueError(
        f"unknown traversal policy {policy!r} (known: {', '.join(TRAVERSAL_POLICIES)})"
    )


def run_traversals(
    graph: LinkGraph,
    policy: str,
    traversals: int,
    *,
    settings: LearningSettings | None = None,
    state: str = "discoverer",
    seed: int = 0,
    on_traversal: Callable[[int, float], None] | None = None,
) -> TraversalReport:
    """P / upper bound of each of `traversals` replayed crawls of `graph`."""
    if traversals < 1:
        raise ValueError(f"traversals must be at least 1, got {traversals}")
    settings = settings or LearningSettings()
    orderer = make_orderer(policy, graph, settings, state)
    reachable = graph.reachable()
    total = float(graph.relevance[reachable].sum())
    best = upper_bound(graph.relevance[reachable])
    rng = np.random.default_rng(seed)
    ratios = []
    for number in range(traversals):
        epsilon = settings.epsilon_at(number) if orderer.learns else 0.0
        order = traverse(graph, orderer, rng, epsilon=epsilon)
        ratio = schedule_performance(graph.relevance[order], total) / best if best > 0 else 0.0
        ratios.append(ratio)
        if on_traversal is not None:
            on_traversal(number, ratio)
    return TraversalReport(
        policy=policy,
        p_over_upper=ratios,
        reachable_pages=int(reachable.sum()),
        links=graph.links,
        upper_bound=best,
    )
