"""The links a Q-learning frontier holds: each one's hashed features (a `Row`), kept from
when its words are at hand until it is learned from, labelled with its section's number,
and their own indexes by the link model (`LinkContextModel.index`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from policies.frontier.candidate import Candidate, LinkContext
from policies.frontier.qlearning.link_model import LinkContextModel, Row
from policies.frontier.qlearning.link_tokens import link_tokens
from policies.frontier.qlearning.row_store import RowStore


class HeldLinks:
    def __init__(self, model: LinkContextModel, section_of: Callable[[str], str]) -> None:
        self.model = model
        self.section_of = section_of
        self._rows = RowStore()  # by URL id, labelled with their sections' numbers
        self._section_numbers: dict[str, int] = {}
        self._sections: list[str] = []  # by number

    def __len__(self) -> int:
        return len(self._rows)

    def __contains__(self, url_id: int) -> bool:
        return url_id in self._rows

    def describe(
        self, links: Sequence[Candidate], parent_relevance: float | None = None
    ) -> list[Row]:
        """Features of links; a link without context (a seed, a URL read back from
        storage) is described by its URL, host, depth and stored parent relevance."""
        tokens = []
        for link in links:
            context = link.context or LinkContext()
            parent = link.parent_relevance if parent_relevance is None else parent_relevance
            tokens.append(
                link_tokens(
                    url=link.url,
                    host=link.host,
                    depth=link.depth,
                    anchor=context.anchor,
                    around=context.around,
                    parent_title=context.parent_title,
                    parent_relevance=parent,
                )
            )
        return self.model.features(tokens)

    def row(self, candidate: Candidate) -> Row:
        """The candidate's features, described and held if they were not."""
        row = self._rows.get(candidate.url_id)
        if row is None:
            row = self.describe([candidate])[0]
            self.hold(candidate, row)
        return row

    def hold(self, candidate: Candidate, row: Row) -> None:
        section = self.section_of(candidate.url)
        number = self._section_numbers.get(section)
        if number is None:
            number = self._section_numbers[section] = len(self._sections)
            self._sections.append(section)
        self._rows.put(candidate.url_id, row, label=number)

    def hold_many(self, candidates: Sequence[Candidate]) -> None:
        """Described together: one by one, each pays the feature hasher's overhead."""
        for candidate, row in zip(candidates, self.describe(candidates), strict=True):
            self.hold(candidate, row)

    def get(self, url_id: int) -> Row | None:
        return self._rows.get(url_id)

    def pop(self, url_id: int) -> Row | None:
        return self._rows.pop(url_id)

    def indexes(
        self, candidates: Sequence[Candidate], section_index: Callable[[str], float]
    ) -> np.ndarray:
        """Each candidate's own index plus its section's `section_index`, from the rows
        held, else described without holding them."""
        if not candidates:
            return np.zeros(0)
        scores = scores_of(candidates)
        skilled = self.model.skill() > 0.0
        held = self._held_indexes([c.url_id for c in candidates], scores, skilled)
        if held is not None:
            own, sections = held
            return own + self.section_indexes_by_number(sections, section_index)
        own = self._described_indexes(candidates, scores, skilled)
        return own + self.section_indexes(candidates, section_index)

    def own_indexes(self, candidates: Sequence[Candidate]) -> np.ndarray:
        """The own indexes of queued candidates: their scores while the model corrects
        nothing."""
        scores = scores_of(candidates)
        if not candidates or self.model.skill() == 0.0:
            return scores
        held = self._held_indexes([c.url_id for c in candidates], scores, skilled=True)
        return held[0] if held is not None else self._described_indexes(candidates, scores, True)

    def _described_indexes(
        self, candidates: Sequence[Candidate], scores: np.ndarray, skilled: bool
    ) -> np.ndarray:
        """The own indexes of candidates, those not held described first."""
        if not skilled:  # best-first's order, without describing anything
            return scores
        unknown = [c for c in candidates if c.url_id not in self._rows]
        described = dict(zip((c.url_id for c in unknown), self.describe(unknown), strict=True))
        rows = [self._rows.get(c.url_id) or described[c.url_id] for c in candidates]
        return self.model.index(rows, scores)

    def _held_indexes(
        self, url_ids: list[int], scores: np.ndarray, skilled: bool
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """The own indexes of queued candidates and their sections' numbers, from the rows
        held for them; None if some are not held."""
        try:
            if not skilled:  # best-first's order
                return scores, self._rows.labels(url_ids)
            indices, values, lengths, labels = self._rows.gather(url_ids)
        except KeyError:
            return None
        return self.model.index_stacked(indices, values, lengths, scores), labels

    def section_indexes_by_number(
        self, numbers: np.ndarray, index: Callable[[str], float]
    ) -> np.ndarray:
        """The `index` of sections by their numbers, each section's computed once."""
        distinct, positions = np.unique(numbers, return_inverse=True)
        sections = self._sections
        return np.array([index(sections[number]) for number in distinct.tolist()])[positions]

    def section_indexes(
        self, candidates: Sequence[Candidate], index: Callable[[str], float]
    ) -> np.ndarray:
        """The `index` of each candidate's section, computed once a section."""
        known: dict[str, float] = {}
        values = np.empty(len(candidates))
        for i, candidate in enumerate(candidates):
            section = self.section_of(candidate.url)
            value = known.get(section)
            if value is None:
                value = known[section] = index(section)
            values[i] = value
        return values


def scores_of(candidates: Sequence[Candidate]) -> np.ndarray:
    """The candidates' scores, best-first's estimates."""
    return np.fromiter((c.score for c in candidates), dtype=np.float64, count=len(candidates))
