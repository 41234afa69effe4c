"""Does the link model rank the frontier better than best-first's score, and how much
could the links' features tell? Live Q-learning crawls of a ground-truth web; at a few
points of each crawl the queued links are ranked several ways, and each ranking is
scored by its AUC: the share of (relevant, not relevant) pairs of queued links that it
puts the right way round (ties count half; 0.5 is a random order, 1 a perfect one).

Over the whole queue:
- `score`: best-first's estimate (the link's words and its parent's relevance);
- `index`: the frontier's own index, the score plus the model's correction shrunk by
  its confidence (what the crawl ranks by, the sections' values left out);
- `full`: the score plus the whole correction, unshrunk;
- `hubs-score`, `hubs-full`: the same two rankings scored on the hubs instead, the
  queued links whose pages link to relevant pages the crawl does not know yet (what
  eq. (10)'s discounted value of the revealed children is there to find).

Over a random half of the queue (`half-score`, `half-full`, as above), against ridge
regressions over the same features and the score (scikit-learn's `Ridge`, alpha 1):
- `fetched-reward`: fitted on the links the crawl fetched, to the relevance the crawl
  found (what the crawl knows, learned in one batch instead of online);
- `fetched-truth`: fitted on the same links, to their true relevance;
- `ceiling`: fitted on the other half of the queue, to its true relevance, which no
  crawl knows: how much the features can tell at all.

    python bench/link_skill.py --ground-truth /tmp/realweb/truth/git [--repeat 2] \
        [--at 200 400 700]

It prints each crawl's AUCs at each point, the relevant links queued there and the
model's skill, then their medians over the crawls. A ranking with no relevant link (or
no hub) queued, or with nothing else, is nan.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import statistics
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import scipy.sparse
import scipy.stats
from sklearn.linear_model import Ridge

from crawler.experiments import CrawlSettings, TruthWeb, check_served, crawl_order
from crawler.reporting.ground_truth import read_graph
from policies import Candidate, PriorityFrontier, register_frontier_policy
from policies.link_graph import LinkGraph
from policies.link_model import Row
from policies.qlearning import QLearningFrontier

MIN_HALF = 200  # fewer queued links than twice this, or fewer fetched: no regressions
MIN_FETCHED = 20


class _Recording(QLearningFrontier):
    """Q-learning as it is, which keeps its queued links' URLs and scores and the links
    it fetched, and at the fetches numbered in `at` ranks its queue (`rank_queue`)."""

    def __init__(  # type: ignore[no-untyped-def]
        self, at: Sequence[int], web: TruthWeb, graph: LinkGraph, **settings
    ) -> None:
        super().__init__(**settings)
        self._at, self._web, self._graph = set(at), web, graph
        self._page = {url: i for i, url in enumerate(web.relevance)}  # graph's numbering
        self._queued: dict[int, tuple[str, float]] = {}  # url id -> (url, score)
        self._fetched_urls: set[str] = set()
        # the links fetched: (features, score, the crawl's reward, the true relevance)
        self._learned: list[tuple[Row, float, float, float]] = []
        self.points: dict[int, dict[str, float]] = {}

    def push(self, candidate: Candidate) -> None:
        self._remember([candidate])
        super().push(candidate)

    def push_many(self, candidates: Sequence[Candidate]) -> None:
        self._remember(candidates)
        super().push_many(candidates)

    def _remember(self, candidates: Sequence[Candidate]) -> None:
        for candidate in candidates:
            if not candidate.revisit:
                self._queued[candidate.url_id] = (candidate.url, candidate.score)

    def raise_score(self, url_id: int, score: float) -> bool:
        raised = super().raise_score(url_id, score)
        if raised and url_id in self._queued:
            self._queued[url_id] = (self._queued[url_id][0], score)
        return raised

    def on_fetched(
        self, candidate: Candidate, relevance: float, children: Sequence[Candidate]
    ) -> None:
        self._queued.pop(candidate.url_id, None)
        self._fetched_urls.add(candidate.url)
        row = self._features.get(candidate.url_id)
        if row is not None and candidate.depth > 0:
            truth = self._web.relevance.get(candidate.url, 0.0)
            self._learned.append((row, candidate.score, relevance, truth))
        if len(self._fetched_urls) in self._at:
            self.points[len(self._fetched_urls)] = self.rank_queue()
        super().on_fetched(candidate, relevance, children)

    def rank_queue(self) -> dict[str, float]:
        """The AUC of each ranking of the queued links (the module's docstring)."""
        held = [(i, self._features.get(i)) for i in self._queued]
        ids = [i for i, row in held if row is not None]
        rows: list[Row] = [row for _, row in held if row is not None]
        urls = [self._queued[i][0] for i in ids]
        scores = np.array([self._queued[i][1] for i in ids])
        truth = np.array([self._web.relevance.get(url, 0.0) for url in urls])
        relevant = truth >= self._web.threshold
        model = self.model
        full = scores + np.array([float(values @ model.weights_[ix]) for ix, values in rows])
        hubs = self.reveals(urls) > 0
        found = {
            "score": auc(scores, relevant),
            "index": auc(model.index(rows, scores), relevant),
            "full": auc(full, relevant),
            "hubs-score": auc(scores, hubs),
            "hubs-full": auc(full, hubs),
        }
        if len(rows) >= 2 * MIN_HALF and len(self._learned) >= MIN_FETCHED:
            found.update(self._fitted(rows, scores, full, truth))
        found["relevant_queued"] = float(relevant.sum())
        found["skill"] = model.skill()
        return found

    def reveals(self, urls: Sequence[str]) -> np.ndarray:
        """For each of `urls`, the relevant pages its page links to that the crawl does
        not know yet (neither fetched nor among `urls`): what fetching it would reveal."""
        page = self._page
        known = {page[url] for url in (*urls, *self._fetched_urls) if url in page}
        relevant = self._graph.relevance >= self._web.threshold
        counts = np.zeros(len(urls))
        for k, url in enumerate(urls):
            if url in page:
                targets = set(self._graph.links_of(page[url]).tolist()) - known
                counts[k] = sum(bool(relevant[t]) for t in targets)
        return counts

    def _fitted(
        self, rows: list[Row], scores: np.ndarray, full: np.ndarray, truth: np.ndarray
    ) -> dict[str, float]:
        """The regressions' AUCs and the crawl's own rankings', on a random half."""
        n_features = self.model.n_features
        queue = with_score(rows, scores, n_features)
        shuffled = np.random.default_rng(0).permutation(len(rows))
        train, test = shuffled[: len(rows) // 2], shuffled[len(rows) // 2 :]
        fetched = with_score(
            [row for row, *_ in self._learned],
            np.array([score for _, score, _, _ in self._learned]),
            n_features,
        )
        rewards = np.array([reward for *_, reward, _ in self._learned])
        truths = np.array([value for *_, value in self._learned])
        relevant = truth[test] >= self._web.threshold
        predicted = {
            "half-score": scores[test],
            "half-full": full[test],
            "fetched-reward": Ridge(alpha=1.0).fit(fetched, rewards).predict(queue[test]),
            "fetched-truth": Ridge(alpha=1.0).fit(fetched, truths).predict(queue[test]),
            "ceiling": Ridge(alpha=1.0).fit(queue[train], truth[train]).predict(queue[test]),
        }
        return {name: auc(values, relevant) for name, values in predicted.items()}


def with_score(rows: Sequence[Row], scores: np.ndarray, n_features: int) -> scipy.sparse.csr_matrix:
    """Links' hashed features and their scores as one sparse matrix, a link a row (the
    score in a last column of its own)."""
    lengths = [len(indices) for indices, _ in rows]
    features = scipy.sparse.csr_matrix(
        (
            np.concatenate([values for _, values in rows]),
            np.concatenate([indices for indices, _ in rows]),
            np.concatenate([[0], np.cumsum(lengths)]),
        ),
        shape=(len(rows), n_features),
    )
    return scipy.sparse.hstack([features, scipy.sparse.csr_matrix(scores[:, None])]).tocsr()


def auc(values: np.ndarray, positive: np.ndarray) -> float:
    """The share of (positive, other) pairs that `values` rank the right way round, ties
    counting half (the Mann-Whitney statistic over the pairs); nan without both."""
    positives = int(positive.sum())
    if positives == 0 or positives == len(positive):
        return math.nan
    ranks = scipy.stats.rankdata(values)
    wins = ranks[positive].sum() - positives * (positives + 1) / 2
    return float(wins / (positives * (len(positive) - positives)))


def median(values: Sequence[float]) -> float:
    """The median of the values that are numbers; nan if none is."""
    numbers = [value for value in values if not math.isnan(value)]
    return statistics.median(numbers) if numbers else math.nan


def line(found: dict[str, float]) -> str:
    return " ".join(f"{name}={value:.3f}" for name, value in found.items())


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ground-truth", type=Path, required=True)
    parser.add_argument("--truth-threshold", type=float, help="default: threshold.txt")
    parser.add_argument("--budget", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--at", type=int, nargs="+", default=[200, 400, 700])
    parser.add_argument("--per-host-concurrency", type=int, default=4)
    args = parser.parse_args()
    web = TruthWeb.read(args.ground_truth, args.truth_threshold)
    await check_served(web)
    graph = read_graph(args.ground_truth)  # pages numbered in pages.tsv's order
    made: list[_Recording] = []

    def factory(**settings) -> PriorityFrontier:  # type: ignore[no-untyped-def]
        made.append(_Recording(args.at, web, graph, **settings))
        return made[-1]

    register_frontier_policy("link-skill", factory)
    settings = CrawlSettings(args.budget, per_host_concurrency=args.per_host_concurrency)
    print(f"ground truth {args.ground_truth.name}")
    by_point: dict[int, dict[str, list[float]]] = {}
    with tempfile.TemporaryDirectory(prefix="link-skill-") as scratch:
        for run in range(args.repeat):
            await crawl_order(web, "link-skill", settings, Path(scratch))
            for at, found in sorted(made[-1].points.items()):
                print(f"run {run} at {at}: {line(found)}", flush=True)
                for name, value in found.items():
                    by_point.setdefault(at, {}).setdefault(name, []).append(value)
    print(f"\nmedians over {args.repeat} crawls")
    for at, runs in sorted(by_point.items()):
        print(f"at {at}: " + line({name: median(values) for name, values in runs.items()}))


if __name__ == "__main__":
    asyncio.run(main())
