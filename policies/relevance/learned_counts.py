"""What the topic scorer learns from pages (`TopicScorer`): document frequencies and the
relevant pages' feedback, which add up over the processes of one crawl, and their saved
form, an .npz archive of the nonzero entries."""

from __future__ import annotations

import io
from dataclasses import dataclass

import numpy as np

from policies.npz import npz_bytes


@dataclass(slots=True)
class LearnedCounts:
    """What the scorer learns from pages; it adds up over the processes of one crawl."""

    document_frequency: np.ndarray
    n_documents: int
    feedback_sum: np.ndarray
    n_feedback: int

    @classmethod
    def zeros(cls, n_features: int) -> LearnedCounts:
        return cls(np.zeros(n_features), 0, np.zeros(n_features), 0)

    def __add__(self, other: LearnedCounts) -> LearnedCounts:
        return LearnedCounts(
            self.document_frequency + other.document_frequency,
            self.n_documents + other.n_documents,
            self.feedback_sum + other.feedback_sum,
            self.n_feedback + other.n_feedback,
        )

    def __sub__(self, other: LearnedCounts) -> LearnedCounts:
        return LearnedCounts(
            self.document_frequency - other.document_frequency,
            self.n_documents - other.n_documents,
            self.feedback_sum - other.feedback_sum,
            self.n_feedback - other.n_feedback,
        )

    def to_bytes(self, n_features: int) -> bytes:
        """As an .npz archive of the nonzero document frequencies and feedback."""
        nonzero = np.flatnonzero(self.document_frequency)
        feedback = np.flatnonzero(self.feedback_sum)
        return npz_bytes(
            index=nonzero.astype(np.int64),
            value=self.document_frequency[nonzero],
            n_documents=np.array([self.n_documents]),
            n_features=np.array([n_features]),
            feedback_index=feedback.astype(np.int64),
            feedback_value=self.feedback_sum[feedback],
            n_feedback=np.array([self.n_feedback]),
        )

    @classmethod
    def from_bytes(cls, state: bytes, n_features: int) -> LearnedCounts:
        """What `to_bytes` wrote, for a scorer of `n_features`."""
        with np.load(io.BytesIO(state)) as saved:
            if int(saved["n_features"][0]) != n_features:
                raise ValueError("saved relevance state was made with another n_features")
            counts = cls.zeros(n_features)
            counts.document_frequency[saved["index"]] = saved["value"]
            counts.feedback_sum[saved["feedback_index"]] = saved["feedback_value"]
            counts.n_documents = int(saved["n_documents"][0])
            counts.n_feedback = int(saved["n_feedback"][0])
        return counts
