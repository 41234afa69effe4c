"""The value of following a link, learned online from the words around it (O'Meara &
Patel's Q(x, fetch) of eq. (10), with the state a link's context, as Rennie & McCallum
learn a link's discounted future reward from its anchor, URL and neighbourhood words).

A link is described by hashed features: the words of its anchor, of its URL (camelCase
and punctuation split), of the text around it, of its parent's title and headings, its
host, and bins of its parent's relevance and its depth. Q is

    Q(x) = a + b * score(x) + w . phi(x)

where score is best-first's estimate. (a, b) calibrate the score to the reward's units
by recursive least squares with forgetting; w is fitted online, by stochastic gradient
descent on the squared error with an L2 penalty (scikit-learn's `SGDRegressor` step),
to what the calibrated score leaves unexplained of eq. (10)'s TD targets. The
frontier's index is score + c(x) w . phi(x), best-first's score moved by the correction
shrunk by the confidence c(x) in [0, 1]:
- c is the model's prequential skill over the calibrated score alone (one minus the
  ratio of their running squared errors on targets not yet learned from, floored at
  zero, and shrunk while few links were judged), times the support of the link's
  features (how often they were learned from);
- untrained, w is zero and the index is best-first's score, exactly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from policies.terms import COLUMNS_MEMORY, hashed_column

N_FEATURES = 2**18
MAX_ERROR = 1e12  # a step's error is clipped to this, as scikit-learn's SGD clips it


# one link's features: the hashed indices, each once, and their values
Row = tuple[np.ndarray, np.ndarray]


class LinkContextModel:
    """Q(x, fetch) of links from hashed context features, learned from TD targets."""

    def __init__(
        self,
        *,
        n_features: int = N_FEATURES,
        step: float = 0.05,
        ridge: float = 1e-5,
        forgetting: float = 0.995,
        support: float = 5.0,
        warmup: float = 200.0,
        batch: int = 16,
        random_state: int = 0,
    ) -> None:
        self.n_features = n_features
        self.step, self.ridge, self.forgetting = step, ridge, forgetting
        self.support, self.warmup, self.batch = support, warmup, batch
        self._random = np.random.default_rng(random_state)  # the order of a batch's steps
        self._columns: dict[str, int] = {}  # a feature's name -> its column, bounded
        self.weights_ = np.zeros(n_features)
        self.counts_ = np.zeros(n_features)  # how often each feature was learned from
        # the score's calibration: forgotten sums of 1, s, s^2, y, s y
        self.calibration_ = np.zeros(5)
        self.errors_ = np.zeros(2)  # running squared errors: calibrated score, model
        self.updates_ = 0
        self.refits_ = 0
        # what merge added of other processes' learning, kept apart from this one's own
        self._merged_counts = np.zeros(n_features)
        self._merged_updates = 0
        # learned from at the next refit: (features, residual target)
        self._pending: list[tuple[Row, float]] = []

    def features(self, tokens: Sequence[list[tuple[str, float]]]) -> list[Row]:
        """The rows of links' tokens (`link_tokens`): scikit-learn's `FeatureHasher`'s
        (pairs, no sign: `hashed_column` of each name; the values of names that hash
        alike added up, three or more of them maybe in another order than its sort
        leaves them; zeros left out), got without loading scikit-learn (52 MB in the
        crawl's process), and each name's column remembered (a site's hosts, bins and
        words repeat)."""
        columns = self._columns
        if len(columns) > COLUMNS_MEMORY:
            columns.clear()
        rows = []
        for pairs in tokens:
            row: dict[int, float] = {}
            for name, value in pairs:
                column = columns.get(name)
                if column is None:
                    column = columns[name] = hashed_column(name, self.n_features)
                if value:
                    row[column] = row.get(column, 0.0) + value
            ascending = sorted(row)
            rows.append(
                (
                    np.array(ascending, dtype=np.int32),
                    np.array([row[column] for column in ascending], dtype=np.float64),
                )
            )
        return rows

    # -- values ----------------------------------------------------------------------

    def calibration(self) -> tuple[float, float]:
        """(a, b) of the calibrated score a + b * score; b at least a small positive."""
        n, s, ss, y, sy = self.calibration_
        if n < 2:
            return 0.0, 1.0
        mean_s, mean_y = s / n, y / n
        variance = ss / n - mean_s**2
        slope = (sy / n - mean_s * mean_y) / variance if variance > 1e-12 else 0.0
        slope = max(slope, 1e-3)
        return mean_y - slope * mean_s, slope

    def skill(self) -> float:
        """One minus the model's running squared error over the calibrated score's,
        shrunk by n / (n + warmup) after n links judged."""
        base, model = self.errors_.tolist()  # floats: asked on every pop and fetch
        if base <= 0.0:
            return 0.0
        shrink = self.updates_ / (self.updates_ + self.warmup)
        return shrink * min(max(1.0 - model / base, 0.0), 1.0)

    def confidence(self, indices: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """c(x) of rows whose features are `indices`, `lengths` of them a row: the skill
        times the mean support of each row's features."""
        skill = self.skill()
        if skill == 0.0:
            return np.zeros(len(lengths))
        counts = self.counts_[indices]
        return skill * _row_sums(counts / (counts + self.support), lengths) / np.maximum(lengths, 1)

    def index(self, rows: Sequence[Row], scores: Sequence[float] | np.ndarray) -> np.ndarray:
        """The frontier's priority: best-first's score moved by the confident part of the
        correction. Score and reward are both cosines with the topic, and the correction
        is added as it is: divided by the calibration's slope, which is near zero where
        the score barely predicts the targets, it would drown the score however
        unconfident (on the testbed, half the harvest of best-first at 500 pages).
        Computed on the rows' arrays: a frontier values one link, or one host's queue,
        at a time, and building a sparse matrix for it costs more than the arithmetic."""
        return self.index_stacked(*_concatenated(rows), scores)

    def index_stacked(
        self,
        indices: np.ndarray,
        values: np.ndarray,
        lengths: np.ndarray,
        scores: Sequence[float] | np.ndarray,
    ) -> np.ndarray:
        """`index` of rows given one after another: all their indices, all their values,
        and each row's length."""
        scores = np.asarray(scores, dtype=np.float64)
        if self.updates_ == 0 or self.skill() == 0.0:
            return scores.copy()
        corrections = _row_sums(values * self.weights_[indices], lengths)
        return scores + self.confidence(indices, lengths) * corrections

    def values(self, rows: Sequence[Row], scores: Sequence[float] | np.ndarray) -> np.ndarray:
        """Q(x, fetch) in the reward's units, with the correction shrunk by confidence."""
        offset, slope = self.calibration()
        return offset + slope * self.index(rows, scores)

    # -- learning --------------------------------------------------------------------

    def update(self, row: Row, score: float, target: float) -> None:
        """Learn one fetched link (its features, its score) towards `target`."""
        indices, values = row
        offset, slope = self.calibration()
        calibrated = offset + slope * score
        correction = float(values @ self.weights_[indices])
        if self.calibration_[0] >= 2:  # prequential: judged before it is learned from
            f = self.forgetting
            self.errors_ *= f
            self.errors_ += ((target - calibrated) ** 2, (target - calibrated - correction) ** 2)
        f = self.forgetting
        self.calibration_ *= f
        self.calibration_ += (1.0, score, score * score, target, score * target)
        offset, slope = self.calibration()
        self._pending.append((row, target - offset - slope * score))
        self.counts_[indices] += 1.0
        self.updates_ += 1
        if len(self._pending) >= self.batch:
            self.refit()

    def refit(self) -> bool:
        """Learn the pending links (`sgd_steps`), in a random order as scikit-learn's
        `partial_fit` shuffles them: a batch's links come from consecutive fetches;
        whether there were any."""
        if not self._pending:
            return False
        order = self._random.permutation(len(self._pending)).tolist()
        rows = [self._pending[i][0] for i in order]
        targets = [self._pending[i][1] for i in order]
        sgd_steps(self.weights_, rows, targets, step=self.step, ridge=self.ridge)
        self._pending = []
        self.refits_ += 1
        return True

    def get_state(self) -> dict[str, np.ndarray]:
        """What this process learned, to save: its weights and calibration, and its own
        feature counts and updates (without what `merge` added of other processes'), as
        arrays; the weights and counts by their columns not zero."""
        self.refit()
        counts = self.counts_ - self._merged_counts
        nonzero = np.flatnonzero(self.weights_)
        counted = np.flatnonzero(counts)
        return {
            "weight_columns": nonzero,
            "weights": self.weights_[nonzero],
            "count_columns": counted,
            "counts": counts[counted],
            "calibration": self.calibration_.copy(),
            "errors": self.errors_.copy(),
            "updates": np.array([self.own_updates]),
        }

    @property
    def own_updates(self) -> int:
        """Links this process learned from (the others' merged in are not counted)."""
        return self.updates_ - self._merged_updates

    def set_state(self, state: Mapping[str, np.ndarray]) -> None:
        """Bring back what `get_state` saved, as this process's own learning."""
        saved = self._read_state(state)
        self.counts_, self.updates_ = saved.counts, saved.updates
        self.calibration_, self.errors_ = saved.calibration, saved.errors
        self._merged_counts, self._merged_updates = np.zeros(self.n_features), 0
        self._use_weights(saved.weights)

    def merge(self, states: Sequence[Mapping[str, np.ndarray]]) -> None:
        """Learn from what other processes of one crawl saved with `get_state`, by
        parameter mixing (McDonald, Hall & Mann, NAACL 2010: each process learns on its
        own share of the links, and their weights are averaged from time to time): the
        weights, the calibration's forgotten sums and the running errors become their
        averages weighted by each one's updates, this process's own included; feature
        counts and updates add up. `get_state` stays this process's own."""
        self.refit()
        own_updates = self.own_updates
        own_counts = self.counts_ - self._merged_counts
        others = [self._read_state(state) for state in states]
        self._merged_counts = sum((o.counts for o in others), np.zeros(self.n_features))
        self._merged_updates = sum(other.updates for other in others)
        self.counts_ = own_counts + self._merged_counts
        self.updates_ = own_updates + self._merged_updates
        if self.updates_ == 0:
            return
        mixed = [(own_updates, self.weights_, self.calibration_, self.errors_)]
        mixed += [(o.updates, o.weights, o.calibration, o.errors) for o in others]
        shares = np.array([updates for updates, *_ in mixed], dtype=np.float64) / self.updates_
        self.calibration_ = shares @ np.array([calibration for *_, calibration, _ in mixed])
        self.errors_ = shares @ np.array([errors for *_, errors in mixed])
        self._use_weights(shares @ np.array([weights for _, weights, *_ in mixed]))

    def _use_weights(self, weights: np.ndarray) -> None:
        self._pending = []
        self.weights_ = weights.copy()

    def _read_state(self, state: Mapping[str, np.ndarray]) -> _SavedModel:
        weights = np.zeros(self.n_features)
        counts = np.zeros(self.n_features)
        for array, name in ((weights, "weight"), (counts, "count")):
            values = np.asarray(state[f"{name}s"], dtype=np.float64)
            array[np.asarray(state[f"{name}_columns"], dtype=np.int64)] = values
        calibration = np.asarray(state["calibration"], dtype=np.float64)
        errors = np.asarray(state["errors"], dtype=np.float64)
        if calibration.shape != (5,) or errors.shape != (2,):
            raise ValueError("saved link context model is malformed")
        if not (np.isfinite(weights).all() and np.isfinite(calibration).all()):
            raise ValueError("saved link context model has non-finite values")
        updates = int(np.asarray(state["updates"]).reshape(-1)[0])
        return _SavedModel(weights, counts, calibration, errors, updates)


def sgd_steps(
    weights: np.ndarray,
    rows: Sequence[Row],
    targets: Sequence[float],
    *,
    step: float,
    ridge: float,
) -> None:
    """Stochastic gradient descent on the squared error with an L2 penalty at a constant
    rate, one step a row in order, on `weights` in place: scikit-learn's `SGDRegressor`
    step (its `partial_fit` without shuffling). Every weight decays by
    (1 - step * ridge), and the row's own features move by -step * error * value. The
    decay of all the weights is kept as one scale, applied once (scikit-learn's own
    device, `wscale`): steps cost the rows' features and one pass over the weights.
    On a batch of 16 links over 2^18 features these steps take 0.09 ms, `partial_fit`
    0.39 ms on an idle machine and 7 and 9 ms (two measures) beside a running crawl, in
    its checks and its passes over the weights."""
    scale = 1.0
    decay = max(0.0, 1.0 - step * ridge)
    for (indices, values), target in zip(rows, targets, strict=True):
        error = scale * float(values @ weights[indices]) - target
        error = min(max(error, -MAX_ERROR), MAX_ERROR)
        scale *= decay
        if scale < 1e-9:  # applied before the steps' divisions lose precision
            weights *= scale
            scale = 1.0
        weights[indices] -= (step * error / scale) * values
    weights *= scale


def _concatenated(rows: Sequence[Row]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows as one array of indices, one of values and each row's length."""
    if len(rows) == 1:
        indices, values = rows[0]
        return indices, values, np.array([len(indices)])
    lengths = np.fromiter((len(indices) for indices, _ in rows), dtype=np.int64, count=len(rows))
    if not rows:
        return np.zeros(0, dtype=np.int64), np.zeros(0), lengths
    indices = np.concatenate([indices for indices, _ in rows])
    return indices, np.concatenate([values for _, values in rows]), lengths


def _row_sums(terms: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The sums of consecutive runs of `terms`, `lengths` long."""
    if len(lengths) == 1:
        return np.array([terms.sum()])
    rows = np.repeat(np.arange(len(lengths)), lengths)
    return np.bincount(rows, weights=terms, minlength=len(lengths))


@dataclass(frozen=True, slots=True)
class _SavedModel:
    weights: np.ndarray
    counts: np.ndarray
    calibration: np.ndarray
    errors: np.ndarray
    updates: int
