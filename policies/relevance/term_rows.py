"""Term counts of many texts as rows: `TermCounter` counts them (with `policies.terms`'
hashing, scikit-learn's `HashingVectorizer`'s), `Rows` holds them as the parts of a CSR
matrix, and the row sums and norms the scorer computes on them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from policies.terms import DEFAULT_N_FEATURES, TermCounts, TermHasher

if TYPE_CHECKING:
    import scipy.sparse as sp


class TermCounter:
    """Hashed term counts of texts as `Rows`: `policies.terms.TermHasher`'s, which are
    scikit-learn's `HashingVectorizer`'s. A text's counts depend on it alone; picklable."""

    def __init__(self, *, n_features: int = DEFAULT_N_FEATURES) -> None:
        self.n_features = n_features
        self.hasher = TermHasher(n_features=n_features)

    def count(self, texts: Sequence[str]) -> Rows:
        return Rows.of(self.hasher.count(texts))


@dataclass(frozen=True, slots=True)
class Rows:
    """Rows of term counts as NumPy views of the parts of a CSR matrix (`indptr` from
    0), what the scorer reads: cheaper to make than a SciPy matrix, whose checks cost
    more than the arithmetic of one page."""

    indptr: np.ndarray  # int64, one more than the rows
    indices: np.ndarray  # int32, ascending within a row
    data: np.ndarray  # float32 counts
    n_features: int

    @classmethod
    def of(cls, counts: TermCounts, start: int = 0, stop: int | None = None) -> Rows:
        """Rows `start` to `stop` of `counts`, sharing their memory."""
        whole = cls(
            np.frombuffer(counts.indptr, dtype=np.int64),
            np.frombuffer(counts.indices, dtype=np.int32),
            np.frombuffer(counts.data, dtype=np.float32),
            counts.n_features,
        )
        return whole if start == 0 and stop is None else whole.rows(start, stop)

    @classmethod
    def concat(cls, parts: Sequence[Rows], n_features: int) -> Rows:
        """The rows of `parts`, one part's after another's."""
        starts = np.cumsum([0, *(part.nnz for part in parts)])[:-1]
        indptr = [part.indptr[1:] + start for part, start in zip(parts, starts, strict=True)]
        return cls(
            np.concatenate([np.zeros(1, dtype=np.int64), *indptr]),
            np.concatenate([np.zeros(0, dtype=np.int32), *(part.indices for part in parts)]),
            np.concatenate([np.zeros(0, dtype=np.float32), *(part.data for part in parts)]),
            n_features,
        )

    def rows(self, start: int = 0, stop: int | None = None) -> Rows:
        """Rows `start` to `stop` of these, sharing their memory."""
        stop = len(self.indptr) - 1 if stop is None else stop
        indptr = self.indptr[start : stop + 1]
        first, last = int(indptr[0]), int(indptr[-1])
        indices, data = self.indices[first:last], self.data[first:last]
        return Rows(indptr - first, indices, data, self.n_features)

    @property
    def shape(self) -> tuple[int, int]:
        return len(self.indptr) - 1, self.n_features

    @property
    def nnz(self) -> int:
        return len(self.indices)

    def tocsr(self) -> sp.csr_matrix:
        """As SciPy's matrix, for checking against scikit-learn (a crawl never needs it)."""
        import scipy.sparse as sp

        return sp.csr_matrix((self.data, self.indices, self.indptr), shape=self.shape)


def row_sums(values: np.ndarray, indptr: np.ndarray) -> np.ndarray:
    """The sum of each row's values (0 for an empty row)."""
    if len(indptr) == 2:  # one row (a page): most calls
        return np.add.reduceat(values, [0]) if values.size else np.zeros(1)
    lengths = indptr[1:] - indptr[:-1]
    sums = np.zeros(len(lengths))
    filled = lengths > 0
    if values.size:
        # starts of the non-empty rows only: reduceat mishandles empty ones
        sums[filled] = np.add.reduceat(values, indptr[:-1][filled])
    return sums


def normalized_rows(values: np.ndarray, indptr: np.ndarray) -> np.ndarray:
    """Each row's values scaled to unit length, in place (an empty or zero row as it
    is): sklearn's normalize, without its per-call validation, which costs more than the
    arithmetic on one page."""
    norms = np.sqrt(row_sums(values**2, indptr))
    norms[norms == 0.0] = 1.0
    values /= norms[0] if len(norms) == 1 else np.repeat(norms, indptr[1:] - indptr[:-1])
    return values
