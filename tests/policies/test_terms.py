"""The standard library's term counts are scikit-learn's, hash for hash."""

from __future__ import annotations

import pickle
import subprocess
import sys

import numpy as np
import scipy.sparse as sp
from hypothesis import example, given
from hypothesis import strategies as st
from sklearn.feature_extraction._stop_words import ENGLISH_STOP_WORDS as SKLEARN_STOP_WORDS
from sklearn.feature_extraction.text import HashingVectorizer

from policies.relevance import Rows, TermCounter
from policies.terms import ENGLISH_STOP_WORDS, TermHasher


def test_the_stop_words_are_scikit_learns() -> None:
    assert ENGLISH_STOP_WORDS == SKLEARN_STOP_WORDS


# words, stop words, and the characters where words meet: punctuation, the underscore,
# letters and digits beyond ASCII, non-breaking and other spaces, marks, surrogates
_WORDS = ["solar", "Energy", "the", "and", "a", "x", "_", "__init__", "42"]
_BEYOND_ASCII = ["caf\u00e9", "\u00c9T", "\u0131", "\u212a", "\u00df", "\u65e5", "\u0661\u0662"]
_BETWEEN = [" ", "\n", "\u00a0", "\u2003", "\u2026", "\u0301", "-", ".", "'", "\x1f", "\ud800"]
_PIECES = st.sampled_from([*_WORDS, *_BEYOND_ASCII, *_BETWEEN, "\U0001d400"])
_TEXTS = st.one_of(st.lists(_PIECES, max_size=30).map("".join), st.text(max_size=60))


def vectorizer_counts(texts: list[str]) -> sp.csr_matrix:
    return HashingVectorizer(
        n_features=2**10, alternate_sign=False, norm=None, stop_words="english", dtype=np.float32
    ).transform(texts)


def assert_same_matrix(rows: sp.csr_matrix, expected: sp.csr_matrix) -> None:
    assert rows.dtype == expected.dtype
    assert rows.shape == expected.shape
    assert np.array_equal(rows.indptr, expected.indptr)
    assert np.array_equal(rows.indices, expected.indices)
    assert np.array_equal(rows.data, expected.data)


@given(st.lists(_TEXTS, min_size=1, max_size=5), st.integers(min_value=0, max_value=4))
@example(["solar energy", "", "solar energy, solar", "the and", "energy"], 1)
def test_rows_of_term_counts_are_the_hashing_vectorizers(texts: list[str], start: int) -> None:
    """Any run of rows, as a matrix, is the vectorizer's; a hasher that has counted the
    words before (its memory of their columns) counts them alike."""
    hasher = TermHasher(n_features=2**10)
    reference = vectorizer_counts(texts)
    start = min(start, len(texts))
    for counts in (hasher.count(texts), hasher.count(texts)):
        assert counts.rows == len(texts)
        assert_same_matrix(Rows.of(counts, start).tocsr(), reference[start:])
        assert_same_matrix(Rows.of(counts, 0, start).tocsr(), reference[:start])
        whole = Rows.of(counts)  # and rows of rows, as the processor takes a page's
        assert_same_matrix(whole.rows(start).tocsr(), reference[start:])
        for stop in range(start, len(texts) + 1):
            assert_same_matrix(whole.rows(start, stop).tocsr(), reference[start:stop])


@given(st.lists(_TEXTS, min_size=1, max_size=5))
@example(
    ["Solar  energy, the solar-energy caf\u00e9\u2026na\u00efve\u00a0x_y", "solar energy, solar"]
)
def test_the_scorers_term_counts_are_the_hashing_vectorizers(texts: list[str]) -> None:
    assert_same_matrix(TermCounter(n_features=2**10).count(texts).tocsr(), vectorizer_counts(texts))


def test_a_hasher_pickles_without_its_memory() -> None:
    hasher = TermHasher(n_features=2**12)
    hasher.count(["solar energy " * 50])
    copy = pickle.loads(pickle.dumps(hasher))
    assert len(pickle.dumps(hasher)) < 200
    assert copy.count(["solar"]) == hasher.count(["solar"])


def test_counting_terms_loads_neither_scipy_nor_scikit_learn() -> None:
    """What a worker process that counts terms imports."""
    code = (
        "import sys; import policies.terms as t; t.TermHasher().count(['solar energy']);"
        "print(sorted(m for m in ('scipy', 'sklearn', 'numpy') if m in sys.modules))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert loaded.stdout.strip() == "[]"
