"""Relevance of pages and links to a topic: TF-IDF cosine similarity.

Counting terms is stateless (the hashing of scikit-learn's HashingVectorizer, in
`policies.terms`), so it can run in a worker process; the inverse document frequencies
are learned online from the topic documents and every page the crawl sees
(`partial_fit`), so a short topic phrase gets sensible weights without a background
corpus. A page's relevance is the cosine similarity of its sublinear TF-IDF vector with
the topic's, 0..1. A link's estimate blends the similarity of its anchor text and URL
words, and of its context (the entry or block it sits in: an index's row or definition
holds the description beside the link), with its parent's relevance: Shark-search's
neighbourhood score (Hersovici et al., 1998), the anchor weighed `ANCHOR_WEIGHT` within
the link's text and its context the rest.

A short topic phrase names few of the words its pages use, so links are scored against
an expanded topic (Rocchio relevance feedback): the phrase plus the centroid of the
pages found relevant so far (`add_feedback`). Page relevance stays the cosine with the
topic as given, so its meaning does not drift during a crawl, until its user labels pages:
then it is the cosine moved by what a logistic regression learned from the labels
(`learn_labels`, `policies.relevance.labels`), and with no labels the cosine exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Self

import numpy as np

from policies.errors import NotFittedError
from policies.relevance.learned_counts import LearnedCounts
from policies.relevance.term_rows import Rows, TermCounter, normalized_rows, row_sums
from policies.terms import DEFAULT_N_FEATURES

if TYPE_CHECKING:
    from policies.relevance.labels import LabelModel

__all__ = [
    "ANCHOR_WEIGHT",
    "DEFAULT_FEEDBACK_WEIGHT",
    "DEFAULT_LINK_TEXT_WEIGHT",
    "TopicScorer",
]

DEFAULT_LINK_TEXT_WEIGHT = 0.7  # the rest of a link's estimate is its parent's relevance
ANCHOR_WEIGHT = 0.8  # Shark-search's beta: the anchor's share of a link's text
DEFAULT_FEEDBACK_WEIGHT = 0.5  # weight of the relevant pages' centroid beside the topic
FEEDBACK_REFRESH = 20  # relevant pages between recomputations of the expanded topic
IDF_REFRESH_GROWTH = 0.02  # the weights are recomputed when the documents grew by this much
LINK_REFRESH_GROWTH = 0.1  # and the expanded topic when they grew by this much


class TopicScorer:
    """Cosine similarity of texts to a topic under an online TF-IDF model."""

    # caches derived from the learned state, recomputed when it has moved enough
    _idf: np.ndarray | None
    _topic_vector: np.ndarray | None
    _link_vector: np.ndarray | None
    label_model_: LabelModel | None

    def __init__(
        self,
        *,
        n_features: int = DEFAULT_N_FEATURES,
        link_text_weight: float = DEFAULT_LINK_TEXT_WEIGHT,
        feedback_weight: float = DEFAULT_FEEDBACK_WEIGHT,
    ) -> None:
        self.n_features = n_features
        self.link_text_weight = link_text_weight
        self.feedback_weight = feedback_weight

    def fit(self, topic_texts: Sequence[str]) -> Self:
        """Learn the topic from its texts (a phrase, a description, example pages)."""
        if not 0.0 <= self.link_text_weight <= 1.0:
            raise ValueError(f"link_text_weight must be in [0, 1], got {self.link_text_weight}")
        if self.feedback_weight < 0.0:
            raise ValueError(f"feedback_weight must not be negative, got {self.feedback_weight}")
        if not topic_texts or not any(text.strip() for text in topic_texts):
            raise ValueError("the topic is empty: give a text or example pages")
        self.counter_ = TermCounter(n_features=self.n_features)
        self.topic_counts_ = self.counter_.count([" ".join(topic_texts)])
        if self.topic_counts_.nnz == 0:
            raise ValueError("the topic has no words left after removing stop words")
        self.document_frequency_ = np.zeros(self.n_features, dtype=np.float64)
        self._log_frequency = np.zeros(self.n_features)  # log(1 + document_frequency_)
        self.n_documents_ = 0
        self.feedback_sum_ = np.zeros(self.n_features, dtype=np.float64)
        self.n_feedback_ = 0
        self._merged = LearnedCounts.zeros(self.n_features)  # what other processes learned
        self._idf_documents = 0
        # the weights and the topic's vectors are refreshed into arrays of their own: a
        # crawl's process maps each block of 128 KiB or more anew (`crawler.memory`), and
        # a new array of 2**18 at each refresh costs more in its pages' first writes than
        # the arithmetic (773 µs a refresh against 45, by 810f12e's bench/event_loop_parts.py)
        self._idf_array = np.empty(self.n_features)
        self._topic_array = np.zeros(self.n_features)
        self._link_array = np.zeros(self.n_features)
        self.label_model_ = None
        self._invalidate()
        return self.partial_fit_counts(self.counter_.count(list(topic_texts)))

    def partial_fit_counts(self, counts: Rows) -> Self:
        """Add documents (as term counts) to the document frequencies."""
        self._check_fitted()
        # each row's indices are distinct: one more document for each term it holds
        np.add.at(self.document_frequency_, counts.indices, 1.0)
        self._log_frequency[counts.indices] = np.log1p(self.document_frequency_[counts.indices])
        self.n_documents_ += counts.shape[0]
        # the weights change little per page: refresh them as the corpus grows
        if self.n_documents_ - self._idf_documents >= max(
            1, self._idf_documents * IDF_REFRESH_GROWTH
        ):
            self._idf = None
            self._topic_vector = None
        return self

    def add_feedback(self, counts: Rows) -> Self:
        """Pages judged relevant: their words widen the topic used to score links."""
        self._check_fitted()
        if counts.shape[0] == 0:
            return self
        unit = normalized_rows(np.log1p(counts.data.astype(np.float64)), counts.indptr)
        np.add.at(self.feedback_sum_, counts.indices, unit)
        self.n_feedback_ += counts.shape[0]
        return self

    def idf(self) -> np.ndarray:
        """The inverse document frequencies: the scorer's own array, written over when
        they are refreshed (copy it to keep it)."""
        self._check_fitted()
        if self._idf is None:  # log((1 + n) / (1 + df)) + 1, the logarithms of df kept
            idf = np.subtract(
                np.log1p(self.n_documents_) + 1.0, self._log_frequency, out=self._idf_array
            )
            self._idf, self._idf_documents = idf, self.n_documents_
            return idf
        return self._idf

    def score_counts(self, counts: Rows) -> np.ndarray:
        """Relevance of each row of term counts to the topic, 0..1: the cosine
        similarity, moved by the labels' model once labels are learned."""
        self._check_fitted()
        if counts.shape[0] == 0:
            return np.zeros(0)
        if self._topic_vector is None:  # the topic's terms stay: their weights are rewritten
            self._topic_vector = self._topic_into(self._topic_array)
        weights = self._weigh(counts)
        cosines = np.clip(
            row_sums(weights * self._topic_vector[counts.indices], counts.indptr), 0.0, 1.0
        )
        model = self.label_model_
        if model is None:
            return cosines
        learned = row_sums(weights * model.coef_[counts.indices], counts.indptr)
        return np.clip(cosines + model.shift(learned, cosines), 0.0, 1.0)

    def learn_labels(self, counts: Rows, relevant: Sequence[bool], model: LabelModel) -> Self:
        """Learn the topic from labelled pages (a row of term counts each): `model`,
        unfitted, is fitted on their TF-IDF vectors and the topic text's, a relevant
        example, and moves every later score. With no labels the scorer forgets any
        it learned and scores by the cosine alone."""
        self._check_fitted()
        if counts.shape[0] != len(relevant):
            raise ValueError(f"{counts.shape[0]} labelled pages and {len(relevant)} labels")
        if counts.shape[0] == 0:
            self.label_model_ = None
            return self
        import scipy.sparse as sp

        examples = Rows.concat([self.topic_counts_, counts], self.n_features)
        features = sp.csr_matrix(
            (self._weigh(examples), examples.indices, examples.indptr), shape=examples.shape
        )
        if self._topic_vector is None:
            self._topic_vector = self._topic_into(self._topic_array)
        cosines = np.clip(features @ self._topic_vector, 0.0, 1.0)
        self.label_model_ = model.fit(features, cosines, np.array([True, *relevant]))
        return self

    def score(self, texts: Sequence[str]) -> np.ndarray:
        self._check_fitted()
        return self.score_counts(self.counter_.count(texts))

    def estimate_links(
        self, link_counts: Rows, parent_relevance: float, context_counts: Rows | None = None
    ) -> np.ndarray:
        """Estimated relevance of links from the counts of their anchor and URL words,
        and of their contexts' words (one row a link) where given.

        Links are compared with the expanded topic (the topic and its relevant pages),
        refreshed here when it is stale, even for no links: a page whose links were all
        known already asks for it as one whose links were new does, so the estimates
        of the links after it do not depend on which of them were known.
        """
        self._check_fitted()
        link_vector = self._link_vector
        if link_vector is None or self._link_vector_is_stale():
            link_vector = self._link_vector = self._expanded_topic()
        if link_counts.shape[0] == 0:
            return np.zeros(0)
        text_scores = self._similarity(link_counts, link_vector)
        if context_counts is not None:
            if context_counts.shape[0] != link_counts.shape[0]:
                raise ValueError(
                    f"{context_counts.shape[0]} link contexts for {link_counts.shape[0]} links"
                )
            context_scores = self._similarity(context_counts, link_vector)
            text_scores = ANCHOR_WEIGHT * text_scores + (1.0 - ANCHOR_WEIGHT) * context_scores
        weight = self.link_text_weight
        return weight * np.clip(text_scores, 0.0, 1.0) + self.parent_share(parent_relevance)

    def parent_share(self, parent_relevance: float) -> float:
        """The part of a link's estimate its parent's relevance gives, whatever its words:
        the least a link of that parent is estimated."""
        return (1.0 - self.link_text_weight) * float(parent_relevance)

    def _link_vector_is_stale(self) -> bool:
        if self._link_vector is None:
            return True
        feedback, documents = self._link_vector_made_at
        return self.n_feedback_ - feedback >= FEEDBACK_REFRESH or (
            self.n_documents_ - documents >= max(1, documents * LINK_REFRESH_GROWTH)
        )

    def _expanded_topic(self) -> np.ndarray:
        """The topic and the relevant pages' centroid, written over the last one."""
        self._link_array.fill(0.0)
        topic = self._topic_into(self._link_array)
        self._link_vector_made_at = (self.n_feedback_, self.n_documents_)
        if self.n_feedback_ == 0 or self.feedback_weight == 0.0:
            return topic
        index = np.flatnonzero(self.feedback_sum_)
        centroid = self.feedback_sum_[index] * self.idf()[index]
        topic[index] += self.feedback_weight * centroid / (np.linalg.norm(centroid) or 1.0)
        topic /= np.linalg.norm(topic) or 1.0
        return topic

    def get_state(self) -> bytes:
        """What this process learned (the document frequencies, the feedback), to save
        and restore across runs; without what `merge` added of other processes'."""
        self._check_fitted()
        return (self._learned() - self._merged).to_bytes(self.n_features)

    def set_state(self, state: bytes) -> Self:
        """Bring back what `get_state` saved, as this process's own learning."""
        self._check_fitted()
        self._set_learned(LearnedCounts.from_bytes(state, self.n_features))
        self._merged = LearnedCounts.zeros(self.n_features)
        return self

    def merge(self, states: Sequence[bytes]) -> Self:
        """Score with this process's counts plus those of `states`: what other processes
        of one crawl (daemons sharing a database) saved with `get_state`. Document
        frequencies, documents and feedback add up; a later merge replaces what an
        earlier one added, and `get_state` stays this process's own."""
        self._check_fitted()
        own = self._learned() - self._merged
        merged = LearnedCounts.zeros(self.n_features)
        for state in states:
            merged = merged + LearnedCounts.from_bytes(state, self.n_features)
        self._set_learned(own + merged)
        self._merged = merged
        return self

    def _learned(self) -> LearnedCounts:
        return LearnedCounts(
            self.document_frequency_, self.n_documents_, self.feedback_sum_, self.n_feedback_
        )

    def _set_learned(self, counts: LearnedCounts) -> None:
        self.document_frequency_ = counts.document_frequency.copy()
        self._log_frequency = np.log1p(self.document_frequency_)
        self.n_documents_ = counts.n_documents
        self.feedback_sum_ = counts.feedback_sum.copy()
        self.n_feedback_ = counts.n_feedback
        self._invalidate()

    def _weigh(self, counts: Rows) -> np.ndarray:
        """The rows' TF-IDF weights (beside `counts.indices`), each row of unit length:
        sublinear term frequency times inverse document frequency."""
        weights = np.log1p(counts.data.astype(np.float64)) * self.idf()[counts.indices]
        return normalized_rows(weights, counts.indptr)

    def _similarity(self, counts: Rows, vector: np.ndarray) -> np.ndarray:
        """Each row's weighted terms dotted with a dense unit vector."""
        return row_sums(self._weigh(counts) * vector[counts.indices], counts.indptr)

    def _topic_into(self, vector: np.ndarray) -> np.ndarray:
        """The topic's weighted terms written into `vector`, zero but for them."""
        vector[self.topic_counts_.indices] = self._weigh(self.topic_counts_)  # one row
        return vector

    def _invalidate(self) -> None:
        self._idf = None
        self._topic_vector = None
        self._link_vector = None
        self._link_vector_made_at = (0, 0)  # (n_feedback_, n_documents_) it was made at

    def _check_fitted(self) -> None:
        if not hasattr(self, "document_frequency_"):
            raise NotFittedError("TopicScorer is not fitted: call fit(topic_texts) first")
