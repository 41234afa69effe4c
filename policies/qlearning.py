"""Q-learning over restless bandits for the frontier (O'Meara & Patel, eq. 9-11).

Every known URL is an arm. Fetching it earns the reward of eq. (11) and reveals the
children no other fetch had revealed; eq. (10) learns

    Q(x_i, fetch) := (1 - a) Q(x_i, fetch) + a (g + gamma sum_{j new child of i} Q(x_j, fetch))

(the arm's own next term, re-fetching a page, is zero on a graph that does not change).
The frontier's priority is the Whittle index Q(x, fetch) - Q(x, wait) of eq. (9). A page
is fetched once and is then worth nothing, and waiting earns nothing and leaves its state
as it is; for such an arm the subsidy for passivity that makes waiting as good as
fetching is Q(x, fetch) itself, so the index is Q(x, fetch).

Two representations of the local state x:
- `DiscovererTable`, the paper's: the identity of the page that discovered the URL (with
  the URL's own, as each arm has its own values), learned over repeated traversals of
  one graph;
- `LinkValueModel`, which generalises within one crawl: the link's features (its
  estimated relevance, the parent's relevance, how many links the parent revealed, the
  depth, the host's harvest so far), each cut into bins, and Q the link's estimated
  relevance plus a correction linear in the bins, fitted by least squares with
  forgetting. With approximation the children of a page share
  values with the page, so a page revealing ten children worth as much as itself would
  be worth more than ten of itself: the sum diverges. A revealed child is therefore
  counted by what it adds over the fetches the crawler can make anyway (the running
  index of what it fetches), the subsidy of Whittle's relaxation.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from policies.frontier import Candidate, PriorityFrontier


def first_fetch_reward(relevance: float) -> float:
    """Eq. (11), the first retrieval: the page's relevance."""
    return relevance


def refetch_reward(old: float, new: float | None) -> float:
    """Eq. (11) for a page fetched again: max(old, new) if it changed, its old relevance
    if it is gone (`new` None)."""
    return old if new is None else max(old, new)


@dataclass(frozen=True, slots=True)
class LearningSettings:
    gamma: float = 0.5  # discount of what a fetch reveals
    step: float = 0.5  # a: the step size, decreasing as step / visits**step_decay
    step_decay: float = 0.5
    epsilon: float = 0.1  # the chance of fetching a random known URL instead of the best
    epsilon_decay: float = 0.9  # each traversal multiplies epsilon by this

    def __post_init__(self) -> None:
        checks = {
            "gamma": 0 <= self.gamma < 1,
            "step": 0 < self.step <= 1,
            "step_decay": 0 <= self.step_decay <= 1,
            "epsilon": 0 <= self.epsilon <= 1,
            "epsilon_decay": 0 <= self.epsilon_decay <= 1,
        }
        for name, ok in checks.items():
            if not ok:
                raise ValueError(f"learning setting {name}={getattr(self, name)} is out of range")

    def epsilon_at(self, traversal: int) -> float:
        return self.epsilon * self.epsilon_decay**traversal


class DiscovererTable:
    """Q(x, fetch) by (page, the page that discovered it), all zero at first (Section 6)."""

    def __init__(self, settings: LearningSettings) -> None:
        self.settings = settings
        self._values: dict[tuple[int, int], float] = {}
        self._visits: dict[tuple[int, int], int] = {}

    def __len__(self) -> int:
        return len(self._values)

    def index(self, page: int, discoverer: int) -> float:
        return self._values.get((page, discoverer), 0.0)

    def update(self, page: int, discoverer: int, reward: float, revealed: float) -> None:
        """Eq. (10) after fetching `page`; `revealed` sums its new children's values."""
        key = (page, discoverer)
        visits = self._visits.get(key, 0) + 1
        self._visits[key] = visits
        s = self.settings
        step = s.step / visits**s.step_decay
        old = self._values.get(key, 0.0)
        self._values[key] = (1 - step) * old + step * (reward + s.gamma * revealed)


# -- the generalising state ---------------------------------------------------------

# log-spaced, so relevance on any scale (TF-IDF cosines are often small) spreads out
RELEVANCE_EDGES = np.array([0.01, 0.02, 0.05, 0.1, 0.2, 0.4])
DEPTH_EDGES = np.array([1, 2, 3, 5, 9])
REVEALED_EDGES = np.array([1, 3, 10, 30, 100])


_SCORE_BINS = _PARENT_BINS = len(RELEVANCE_EDGES) + 1
_OFFSETS = np.cumsum(
    [
        1,  # bias
        _SCORE_BINS * (_PARENT_BINS + 1),  # score x parent relevance (or unknown)
        len(DEPTH_EDGES) + 1,
        len(REVEALED_EDGES) + 1,
    ]
)
FEATURES = int(_OFFSETS[-1] + _PARENT_BINS)  # + host harvest


def link_features(
    score: npt.ArrayLike,
    parent_relevance: npt.ArrayLike,
    revealed: npt.ArrayLike,
    depth: npt.ArrayLike,
    host_harvest: npt.ArrayLike,
) -> np.ndarray:
    """The active one-hot features of links, one row of five per link: a bias and the
    bins of the link's estimated relevance crossed with its parent's (NaN: unknown, as
    for a seed), its depth, how many new links its parent revealed
    with it, and the mean relevance of its host's pages fetched so far."""
    score_bin = np.searchsorted(RELEVANCE_EDGES, score, side="right")
    parent = np.asarray(parent_relevance, dtype=np.float64)
    parent_bin = np.where(
        np.isnan(parent), _PARENT_BINS, np.searchsorted(RELEVANCE_EDGES, parent, side="right")
    )
    columns = np.broadcast_arrays(
        0,
        _OFFSETS[0] + score_bin * (_PARENT_BINS + 1) + parent_bin,
        _OFFSETS[1] + np.searchsorted(DEPTH_EDGES, depth, side="right"),
        _OFFSETS[2] + np.searchsorted(REVEALED_EDGES, revealed, side="right"),
        _OFFSETS[3] + np.searchsorted(RELEVANCE_EDGES, host_harvest, side="right"),
    )
    return np.stack(columns, axis=-1).astype(np.int32)


class LinkValueModel:
    """Q(x, fetch) as the link's estimated relevance (the expected reward, best-first's
    priority) plus a correction linear in one-hot link features, fitted to eq. (10)'s
    targets by ridge least squares over exponentially forgotten sufficient statistics.
    Before it has learned anything it orders links as best-first does."""

    def __init__(
        self,
        settings: LearningSettings,
        *,
        forgetting: float = 0.999,
        ridge: float = 1.0,
        refit_every: int = 100,
        index_memory: float = 0.9,
    ) -> None:
        self.settings = settings
        self.forgetting, self.ridge, self.refit_every = forgetting, ridge, refit_every
        self.index_memory = index_memory
        self.gram = np.zeros((FEATURES, FEATURES))
        self.moments = np.zeros(FEATURES)
        self.weights: np.ndarray = np.zeros(FEATURES)
        self.updates = 0
        self.subsidy = 0.0  # running index of what is fetched: the opportunity cost

    def values(self, features: np.ndarray, estimates: np.ndarray | float) -> np.ndarray:
        """Q(x, fetch) of links: rows of `link_features` and estimated relevances."""
        return estimates + self.weights[features].sum(axis=-1)

    def fetched(self, index: float) -> None:
        """The index of a URL just taken from the frontier."""
        m = self.index_memory
        self.subsidy = m * self.subsidy + (1 - m) * index

    def target(self, reward: float, children: np.ndarray, estimates: np.ndarray) -> float:
        """Eq. (10)'s target: the reward and what the new children (rows of features,
        estimated relevances) add over the subsidy."""
        revealed = np.maximum(0.0, self.values(children, estimates) - self.subsidy).sum()
        return reward + self.settings.gamma * float(revealed)

    def update(self, features: np.ndarray, estimate: float, target: float) -> None:
        """Fit the link's value (features, estimated relevance) towards `target`."""
        active = np.asarray(features)
        self.gram *= self.forgetting
        self.moments *= self.forgetting
        self.gram[np.ix_(active, active)] += 1.0
        self.moments[active] += target - estimate
        self.updates += 1
        if self.updates % self.refit_every == 0 or self.updates < self.refit_every:
            self.refit()

    def refit(self) -> None:
        regularised = self.gram + self.ridge * np.eye(FEATURES)
        self.weights = np.linalg.solve(regularised, self.moments)

    def get_state(self) -> dict[str, object]:
        return {
            "gram": self.gram.tolist(),
            "moments": self.moments.tolist(),
            "updates": self.updates,
            "subsidy": self.subsidy,
        }

    def set_state(self, state: dict[str, object]) -> None:
        gram = np.asarray(state["gram"], dtype=np.float64)
        moments = np.asarray(state["moments"], dtype=np.float64)
        if gram.shape != (FEATURES, FEATURES) or moments.shape != (FEATURES,):
            raise ValueError("saved link value model has a different number of features")
        self.gram, self.moments = gram, moments
        self.updates = int(state["updates"])  # type: ignore[call-overload]
        self.subsidy = float(state["subsidy"])  # type: ignore[arg-type]
        if not math.isfinite(self.subsidy):
            raise ValueError("saved link value model has a non-finite subsidy")
        self.refit()


class QLearningFrontier(PriorityFrontier):
    """The live frontier ordered by the learned index, Q(x, fetch) of the link's features.

    Told what each fetch found, it learns eq. (10) with the generalising state. Links it
    has seen little of get an optimistic bonus, `exploration` / sqrt(1 + observations)
    averaged over the link's features, so that the crawl tries them. The queue is
    re-ranked as the model moves, when the fetches since the last ranking reach a tenth
    of the queue (at least `rerank_every`), which keeps the ranking's cost per fetch flat.
    A frontier spilled to storage comes back by this index too (`refill_order`).
    """

    name = "qlearning"

    def __init__(
        self,
        settings: LearningSettings | None = None,
        *,
        exploration: float = 0.05,
        rerank_every: int = 500,
    ) -> None:
        super().__init__()
        self.settings = settings or LearningSettings()
        self.model = LinkValueModel(self.settings)
        self.exploration = exploration
        self.rerank_every = rerank_every
        self.observations = np.zeros(FEATURES)
        self._harvest: dict[str, list[float]] = {}  # host -> [relevance sum, pages]
        self._features: dict[int, np.ndarray] = {}  # queued URL id -> its link features
        # the last fetch's new links, not yet pushed: (features, index)
        self._children: dict[int, tuple[np.ndarray, float]] = {}
        self._since_rerank = 0

    # -- ranking ---------------------------------------------------------------------

    def priority(self, candidate: Candidate) -> float:
        child = self._children.pop(candidate.url_id, None)
        if child is not None:  # described, and valued, with its siblings
            self._features[candidate.url_id] = child[0]
            return child[1]
        features = self._features.get(candidate.url_id)
        if features is None:  # a seed, or a URL read back from storage
            features = self._features[candidate.url_id] = self._describe_stored([candidate])[0]
        return float(self._index(features[np.newaxis], np.array([candidate.score]))[0])

    def priorities(self, candidates: Sequence[Candidate]) -> np.ndarray:
        """The index of queued candidates, or of candidates not queued (a refill choosing
        among stored URLs) without remembering anything of them."""
        if not candidates:
            return np.zeros(0)
        unknown = [c for c in candidates if c.url_id not in self._features]
        described = dict(
            zip((c.url_id for c in unknown), self._describe_stored(unknown), strict=True)
        )
        known = self._features
        features = np.stack(
            [known[c.url_id] if c.url_id in known else described[c.url_id] for c in candidates]
        )
        return self._index(features, np.array([c.score for c in candidates]))

    def _describe_stored(self, links: Sequence[Candidate]) -> np.ndarray:
        """Links described by what their parent's fetch showed, as far as it is known: a
        URL read back from storage carries it, as it was described when found, but for
        its host's harvest, which is today's."""
        if not links:
            return np.zeros((0, 5), dtype=np.int32)
        parents = [np.nan if c.parent_relevance is None else c.parent_relevance for c in links]
        return self._describe(
            links,
            parent_relevance=np.array(parents),
            revealed=np.array([c.revealed for c in links]),
        )

    def _index(self, features: np.ndarray, estimates: np.ndarray) -> np.ndarray:
        bonus = (1.0 / np.sqrt(1.0 + self.observations[features])).mean(axis=-1)
        return self.model.values(features, estimates) + self.exploration * bonus

    def _describe(
        self,
        links: Sequence[Candidate],
        *,
        parent_relevance: float | np.ndarray,
        revealed: int | np.ndarray,
    ) -> np.ndarray:
        harvest = np.array([self._host_harvest(link.host) for link in links])
        return link_features(
            np.array([link.score for link in links]),
            parent_relevance,
            revealed,
            np.array([link.depth for link in links]),
            harvest,
        )

    def _host_harvest(self, host: str) -> float:
        total, pages = self._harvest.get(host, (0.0, 0.0))
        return (total + 0.1) / (pages + 1.0)  # one pseudo-page of 0.1 before any fetch

    def pop(self, is_ready: Callable[[str], bool]) -> Candidate | None:
        candidate = super().pop(is_ready)
        if candidate is not None and not candidate.revisit:
            features = self._features.get(candidate.url_id)
            if features is not None:
                self.model.fetched(float(self.model.values(features, candidate.score)))
        return candidate

    # -- learning --------------------------------------------------------------------

    def on_fetched(
        self, candidate: Candidate, relevance: float, children: Sequence[Candidate]
    ) -> None:
        """Eq. (10) for the fetched page; describes its new links before they are pushed."""
        self._children.clear()
        if candidate.revisit:  # re-visits are the re-visit scheduler's, not discoveries
            return
        described = self._describe(children, parent_relevance=relevance, revealed=len(children))
        estimates = np.array([child.score for child in children])
        indices = self._index(described, estimates).tolist() if children else []
        self._children = {
            child.url_id: (row, index)
            for child, row, index in zip(children, described, indices, strict=True)
        }
        stats = self._harvest.setdefault(candidate.host, [0.0, 0.0])
        stats[0] += relevance
        stats[1] += 1
        features = self._features.pop(candidate.url_id, None)
        if features is None:
            features = self._describe_stored([candidate])[0]
        reward = first_fetch_reward(relevance)
        target = self.model.target(reward, described, estimates)
        self.model.update(features, candidate.score, target)
        np.add.at(self.observations, features, 1.0)
        self._since_rerank += 1
        if self._since_rerank >= max(self.rerank_every, len(self) // 10):
            self._since_rerank = 0
            self.reprioritize()

    # -- saving ----------------------------------------------------------------------

    def get_state(self) -> bytes:
        state = {
            "model": self.model.get_state(),
            "observations": self.observations.tolist(),
            "harvest": self._harvest,
        }
        return json.dumps(state).encode()

    def set_state(self, blob: bytes) -> None:
        try:
            state = json.loads(blob)
            self.model.set_state(state["model"])
            observations = np.asarray(state["observations"], dtype=np.float64)
            harvest = {str(host): [float(a), float(b)] for host, (a, b) in state["harvest"].items()}
        except (ValueError, KeyError, TypeError) as error:
            raise ValueError(f"saved Q-learning frontier state is unreadable: {error}") from None
        if observations.shape != (FEATURES,):
            raise ValueError("saved Q-learning frontier state has a different number of features")
        self.observations, self._harvest = observations, harvest
