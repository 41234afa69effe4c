"""Relevance of pages and links to a topic: the TF-IDF scorer (`scorer`), the term count
rows it reads (`term_rows`) and what it learns (`learned_counts`). The label model
(`labels`, SciPy's optimiser) is imported by whoever learns from labels, not here."""

from policies.errors import NotFittedError
from policies.relevance.scorer import (
    ANCHOR_WEIGHT,
    DEFAULT_FEEDBACK_WEIGHT,
    DEFAULT_LINK_TEXT_WEIGHT,
    TopicScorer,
)
from policies.relevance.term_rows import Rows, TermCounter

__all__ = [
    "ANCHOR_WEIGHT",
    "DEFAULT_FEEDBACK_WEIGHT",
    "DEFAULT_LINK_TEXT_WEIGHT",
    "NotFittedError",
    "Rows",
    "TermCounter",
    "TopicScorer",
]
