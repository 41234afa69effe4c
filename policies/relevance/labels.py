"""A topic learned from its user's labels: a logistic regression over the pages' TF-IDF
vectors whose prior is the topic's cosine.

A labelled page is an example of the topic (relevant or not), and the topic text itself
a relevant one. The log-odds that a page is relevant are

    z = slope * (cosine - threshold) + a * (cosine - threshold) + w . x + b

where x is the page's TF-IDF vector (unit length, the `TopicScorer`'s weights), cosine
its similarity with the topic and threshold the crawl's relevance threshold. The first
term is a fixed offset, the prior: with no labels a page at the threshold is even odds,
and `slope` says how sure the cosine alone is. a, w and b are learned from the examples
by L2-penalised logistic regression (scikit-learn's liblinear objective with `C`, the
intercept penalised as a weight), so a few labels move the model a little and many more.
scikit-learn's LogisticRegression takes no offset, hence the fit here (SciPy's L-BFGS).

The relevance the crawl uses is the log-odds put back on the cosine's scale,

    relevance = threshold + z / slope = cosine + (a * (cosine - threshold) + w . x + b) / slope

clipped to 0..1: with no labels it is the cosine; a page counts as relevant (relevance at
or above the threshold) exactly when the model's probability is one half or more; and a
page's margin, |relevance - threshold| = |z| / slope, is how sure the model is of it,
which uncertainty sampling asks the user about first (`storage.labels.uncertain_pages`).
"""

from __future__ import annotations

from typing import Self

import numpy as np
import scipy.sparse as sp
from scipy.optimize import minimize
from scipy.special import expit

from policies.errors import NotFittedError

DEFAULT_SLOPE = 20.0  # log-odds a cosine: 0.1 above the threshold is odds of e^2 (p 0.88)
# inverse strength of the penalty, as scikit-learn's C: at 1.0, twenty pages the crawl
# scored just below its threshold, all labelled relevant, lowered the boundary so far
# that F1 on a crawl's other pages fell 0.86 -> 0.54 (`python -m bench labels`, docs/labels.md)
DEFAULT_C = 0.1
MAX_ITERATIONS = 500  # of L-BFGS; a few dozen labelled pages take tens


class LabelModel:
    """The topic's logistic regression, fitted on labelled pages' TF-IDF vectors."""

    def __init__(
        self, *, threshold: float, slope: float = DEFAULT_SLOPE, C: float = DEFAULT_C
    ) -> None:
        self.threshold = threshold
        self.slope = slope
        self.C = C

    def fit(
        self,
        features: sp.csr_matrix,
        cosines: np.ndarray,
        relevant: np.ndarray,
        sample_weight: np.ndarray | None = None,
    ) -> Self:
        """Learn from examples: each row of `features` a page's TF-IDF vector, beside its
        cosine with the topic and whether it is relevant."""
        if not 0.0 <= self.threshold <= 1.0:
            raise ValueError(f"threshold must be in [0, 1], got {self.threshold}")
        if not self.slope > 0.0:
            raise ValueError(f"slope must be positive, got {self.slope}")
        if not self.C > 0.0:
            raise ValueError(f"C must be positive, got {self.C}")
        n = features.shape[0]
        if n == 0:
            raise ValueError("no labelled examples to learn from")
        if len(cosines) != n or len(relevant) != n:
            raise ValueError(f"{n} examples, {len(cosines)} cosines and {len(relevant)} labels")
        weight = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=float)
        # only the examples' terms can gain a weight; the others stay 0
        columns, local = np.unique(features.indices, return_inverse=True)
        x = sp.csr_matrix((features.data, local, features.indptr), shape=(n, len(columns)))
        shift = np.asarray(cosines, dtype=float) - self.threshold
        offset = self.slope * shift
        sign = np.where(np.asarray(relevant, dtype=bool), 1.0, -1.0)
        m = len(columns)

        def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
            z = offset + x @ theta[:m] + theta[m] * shift + theta[m + 1]
            margins = sign * z
            value = float(weight @ np.logaddexp(0.0, -margins) + theta @ theta / (2 * self.C))
            dz = -weight * sign * expit(-margins)
            gradient = np.concatenate([x.T @ dz, [dz @ shift, dz.sum()]]) + theta / self.C
            return value, gradient

        found = minimize(
            loss, np.zeros(m + 2), jac=True, method="L-BFGS-B", options={"maxiter": MAX_ITERATIONS}
        )
        self.coef_ = np.zeros(features.shape[1])
        self.coef_[columns] = found.x[:m]
        self.cosine_coef_ = float(found.x[m])
        self.intercept_ = float(found.x[m + 1])
        self.n_examples_ = n
        return self

    def shift(self, learned: np.ndarray, cosines: np.ndarray) -> np.ndarray:
        """How far the labels move pages' relevance from their cosines: `learned` is each
        page's w . x (`coef_` dotted with its TF-IDF vector)."""
        self._check_fitted()
        moved = learned + self.cosine_coef_ * (cosines - self.threshold) + self.intercept_
        return moved / self.slope

    def relevance(self, features: sp.csr_matrix, cosines: np.ndarray) -> np.ndarray:
        """Pages' relevance under the model (see the module's docstring), 0..1."""
        self._check_fitted()
        learned = features @ self.coef_
        return np.clip(cosines + self.shift(learned, cosines), 0.0, 1.0)

    def probability(self, features: sp.csr_matrix, cosines: np.ndarray) -> np.ndarray:
        """The model's probability that each page is relevant."""
        self._check_fitted()
        learned = features @ self.coef_
        z = self.slope * (cosines - self.threshold) + self.slope * self.shift(learned, cosines)
        return expit(z)

    def _check_fitted(self) -> None:
        if not hasattr(self, "coef_"):
            raise NotFittedError("LabelModel is not fitted: call fit(features, ...) first")
