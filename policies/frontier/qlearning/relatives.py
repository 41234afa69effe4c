"""The raise of a relevant page's relatives in the Q-learning frontier, and its undoing.

Eq. (10)'s discounted value, seen from the other side (O'Meara & Patel): a relevant
page's reward is part of what its discoverer's fetch revealed, so each other link that
fetch revealed is worth at least gamma times that reward, and each link revealed with
its discoverer gamma squared times it: the pages beside a relevant one, worth more than
their words say before what lies beyond them is seen. A family whose raised pages stop
paying goes back to its own estimates. The raise is in memory: a URL spilled and read
back, or queued when the crawl resumed, ranks by its stored estimate.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from policies.frontier.qlearning.link_families import LinkFamilies
from policies.frontier.qlearning.settings import QLearningSettings
from policies.relevance.scorer import DEFAULT_LINK_TEXT_WEIGHT


class RankedQueue(Protocol):
    """What the raise asks of the frontier whose links it moves."""

    def queued_score(self, url_id: int) -> float | None: ...

    def rescore(self, url_id: int, score: float) -> bool: ...

    def is_relevant(self, relevance: float) -> bool: ...


class Relatives:
    """Which fetch revealed which links (`LinkFamilies`), the links raised by a relevant
    relative (with their own estimates, to lower them again) and each raised family's
    misses in a row."""

    def __init__(self, settings: QLearningSettings, families: LinkFamilies | None = None) -> None:
        self.settings = settings
        self.families = families if families is not None else LinkFamilies()
        # the warmup's relevant pages, raising theirs once it ends
        self.held_back_: list[tuple[int, float]] = []
        self.raised_: dict[int, tuple[float, float]] = {}  # raised link -> (own, raised)
        self.misses_: dict[int, int] = {}  # a raised family's revealer -> misses in a row

    def fetched(
        self,
        queue: RankedQueue,
        url_id: int,
        relevance: float,
        revealed: Sequence[int],
        *,
        warming_up: bool,
    ) -> None:
        """A fetched page of `relevance` revealed the links `revealed`: a miss counted
        for its family, its family kept, and its relatives raised if it is relevant.
        While the warmup's pages come in the raise is held back, so that those pages are
        best-first's, and made once the warmup ends: the queue is then as if raised from
        the first page."""
        if not self.settings.relative_levels:
            return
        self._count_miss(queue, url_id, relevance, bool(revealed))
        self.families.revealed(url_id, list(revealed))
        if self.held_back_ and not warming_up:
            held, self.held_back_ = self.held_back_, []
            for page, earned in held:
                self._raise(queue, page, earned)
        if not queue.is_relevant(relevance):
            return
        if warming_up:
            self.held_back_.append((url_id, relevance))
        else:
            self._raise(queue, url_id, relevance)

    def _raise(self, queue: RankedQueue, url_id: int, relevance: float) -> None:
        """Each link revealed with `url_id` raised to gamma times its reward, counted as
        a link's estimate counts its parent's relevance (0.3 of it), and each one revealed
        with its discoverer to gamma squared times it. Raised, never lowered here; with
        `relatives_lowered_after`, lowered again once the family's raised pages miss
        (`_count_miss`)."""
        settings = self.settings
        share = (1.0 - DEFAULT_LINK_TEXT_WEIGHT) * relevance
        revealer = self.families.revealer_of(url_id)
        for level, links in self.families.relatives(url_id, levels=settings.relative_levels):
            score = settings.gamma**level * share
            for link in links.tolist():
                queued = queue.queued_score(link)
                if queued is None or queued >= score:
                    continue
                queue.rescore(link, score)
                if settings.relatives_lowered_after is not None:
                    own = self.raised_.get(link, (queued, score))[0]
                    self.raised_[link] = (own, score)
            if settings.relatives_lowered_after is not None and revealer is not None:
                if settings.relatives_kept_by_relevance:
                    self.misses_[revealer] = 0
                else:
                    self.misses_.setdefault(revealer, 0)
                revealer = self.families.revealer_of(revealer)
        if len(self.raised_) > 2 * self.families.capacity:
            self._forget_unheld_raises()

    def _count_miss(
        self, queue: RankedQueue, url_id: int, relevance: float, revealed_links: bool
    ) -> None:
        """A raised link's page was not relevant and revealed no new link: one more miss
        for its family (not relevant is not asked with `relatives_kept_by_relevance`
        False); at `relatives_lowered_after` in a row, the family's links still queued
        at their raise go back to their own estimates."""
        if self.raised_.pop(url_id, None) is None:
            return
        revealer = self.families.revealer_of(url_id)
        if revealer is None or revealer not in self.misses_:
            return
        kept_by_relevance = self.settings.relatives_kept_by_relevance
        if revealed_links or (queue.is_relevant(relevance) and kept_by_relevance):
            self.misses_[revealer] = 0
            return
        self.misses_[revealer] += 1
        lowered_after = self.settings.relatives_lowered_after
        assert lowered_after is not None
        family = self.families.family(revealer)
        if self.misses_[revealer] < lowered_after or family is None:
            return
        if kept_by_relevance:
            del self.misses_[revealer]  # a new raise counts from none
        for link in family.tolist():
            own, raised = self.raised_.pop(link, (None, None))
            if own is not None and queue.queued_score(link) == raised:  # not raised since
                queue.rescore(link, own)

    def _forget_unheld_raises(self) -> None:
        """Forget the raises of families no longer held (`LinkFamilies` drops the
        oldest): they can no longer be lowered, and a long crawl would pile them up. It
        leaves at most the links held, about `capacity`, so it runs at most once in
        `capacity` raises."""
        self.raised_ = {
            link: scores
            for link, scores in self.raised_.items()
            if self.families.revealer_of(link) is not None
        }
        self.misses_ = {
            page: misses
            for page, misses in self.misses_.items()
            if self.families.family(page) is not None
        }
