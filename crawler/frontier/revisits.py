"""Re-visiting sources: finding the pages that keep publishing, learning what their
re-visits find, and choosing which to re-visit each period.

Avrachenkov & Borkar's model, live: a source i publishes new items (links) at rate
Lambda_i, each worth xi_i (the relevance of the items once fetched), whose interest
decays at the topic's rate mu (`interest_half_life`, or a half-life set for the URLs
under a prefix, `source_half_lives`). Every `revisit_period` seconds the sources of
highest priority are re-visited while their costs fit `revisit_budget`; a source
costs one fetch, more on a host whose delay is longer than the crawl's. Their new links
enter the frontier and are fetched as discovery, which shares the same fetchers.

A page becomes a source when it is a seed or links to at least `source_min_links` pages in
scope. Its first fetch starts the clock; each re-visit (a conditional GET) adds the new
URLs it revealed and the time since the visit before, from which Lambda_i is estimated
(a Poisson rate with a prior); whether the page changed is counted too, for a change-rate
estimate (Cho & Garcia-Molina) that `crawler status` shows beside it.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

import storage
from crawler.config import sections
from crawler.store.records import Committed, PageSignature
from policies import Candidate
from policies.revisit.ephemeral import plan_revisits
from policies.revisit.source_rates import mean_worths, poisson_rates

PRIOR_WEIGHT = 1.0  # in items: the worth prior is as strong as one scored item
PRIOR_RATE = 1.0  # new items a period expected of a source not yet re-visited
MIN_PRIOR_WORTH = 0.01  # the worth expected of a source's items, however low the threshold
MAX_ITEMS_TRACKED = 100_000  # new items whose worth is still to be learned
REVISIT_SCORE = 1.0  # a re-visit's link score: the most relevant-looking


@dataclass(frozen=True, slots=True)
class RevisitResult:
    """What one re-visit found, for the metrics."""

    result: str  # new_items | unchanged | not_modified | failed
    new_items: int


class Revisits:
    def __init__(
        self,
        settings: sections.Revisits,
        *,
        relevance_threshold: float,
        seeds: Iterable[str],
        cost_of: Callable[[str], float] = lambda host: 1.0,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.settings = settings
        # a source's items are expected to be as relevant as a relevant page, until scored
        self.prior_worth = max(relevance_threshold, MIN_PRIOR_WORTH)
        self.seeds = set(seeds)
        self.cost_of = cost_of  # a host's re-visit cost
        self.wall_clock = wall_clock
        self.sources: dict[int, storage.SourceRecord] = {}
        self._item_source: dict[int, int] = {}  # new item's url id -> its source's
        self._dirty: set[int] = set()
        self._planned: set[int] = set()  # re-visits in the frontier or under way
        self._decays: dict[int, float] = {}  # mu per period, by source

    # -- what the crawl found --------------------------------------------------------

    def restore(self, records: Iterable[storage.SourceRecord]) -> None:
        for record in records:
            self.sources[record.url_id] = record

    def conditional_headers(self, candidate: Candidate) -> dict[str, str]:
        """If-None-Match / If-Modified-Since for a re-visit, from the last answer."""
        source = self.sources.get(candidate.url_id) if candidate.revisit else None
        headers = {}
        if source is not None and source.etag:
            headers["If-None-Match"] = source.etag
        if source is not None and source.last_modified:
            headers["If-Modified-Since"] = source.last_modified
        return headers

    def committed(self, item: Committed) -> RevisitResult | None:
        """Learn from a stored page: a source's re-visit, a new source, or a source's item.
        Returns what a re-visit found, None for any other page."""
        write = item.write
        candidate, record = write.candidate, write.record
        now = write.signature.fetched_at or self.wall_clock()
        if candidate.revisit:
            self._planned.discard(candidate.url_id)
            return self._revisited(item, now)
        source_id = self._item_source.pop(candidate.url_id, None)
        if source_id is not None and record is not None and record.relevance is not None:
            source = self.sources[source_id]
            self._update(
                dataclasses.replace(
                    source,
                    worth_total=source.worth_total + record.relevance,
                    worth_items=source.worth_items + 1,
                )
            )
        if (
            candidate.url_id not in self.sources
            and len(self.sources) < self.settings.max_sources
            and record is not None
            and record.error is None
            and record.final_url in (None, candidate.url)  # a redirect's target is its own
            and (
                candidate.url in self.seeds
                or write.links_in_scope >= self.settings.source_min_links
            )
        ):
            self.sources[candidate.url_id] = _with_signature(
                storage.SourceRecord(
                    candidate.url_id, candidate.url, candidate.host, candidate.depth, now
                ),
                write.signature,
            )
            self._dirty.add(candidate.url_id)
            self._track_items(item)  # what it lists now tells its items' worth already
        return None

    def _revisited(self, item: Committed, now: float) -> RevisitResult:
        write = item.write
        source = self.sources.get(write.candidate.url_id)
        if source is None:
            return RevisitResult("failed", 0)
        if write.record is not None and write.record.error is not None:
            # the items are still there for the next visit to count: the clock runs on
            return RevisitResult("failed", 0)
        not_modified = write.record is None
        changed = not not_modified and write.signature.fingerprint != source.fingerprint
        new_items = len(item.new_urls)
        self._track_items(item)
        updated = dataclasses.replace(
            source,
            last_visit=now,
            visits=source.visits + 1,
            items=source.items + new_items,
            exposure=source.exposure + max(now - source.last_visit, 1e-3),
            changes=source.changes + changed,
        )
        self._update(updated if not_modified else _with_signature(updated, write.signature))
        if not_modified:
            return RevisitResult("not_modified", 0)
        return RevisitResult("new_items" if new_items else "unchanged", new_items)

    def _track_items(self, item: Committed) -> None:
        """Remember whose items the new URLs are, so their relevance counts towards xi."""
        for queued in item.new_urls:
            self._item_source[queued.id] = item.write.candidate.url_id
        while len(self._item_source) > MAX_ITEMS_TRACKED:  # the oldest go unscored
            del self._item_source[next(iter(self._item_source))]

    def _update(self, source: storage.SourceRecord) -> None:
        self.sources[source.url_id] = source
        self._dirty.add(source.url_id)

    def take_dirty(self) -> list[storage.SourceRecord]:
        """The sources changed since the last call, to be saved."""
        changed = [self.sources[url_id] for url_id in sorted(self._dirty)]
        self._dirty.clear()
        return changed

    # -- what to re-visit ------------------------------------------------------------

    def plan(self) -> list[Candidate]:
        """This period's re-visits (none while a source's last re-visit is pending)."""
        settings = self.settings
        if not settings.enabled:
            return []
        ready = [s for s in self.sources.values() if s.url_id not in self._planned]
        if not ready:
            return []
        totals = _totals(ready)
        everything = _totals(list(self.sources.values()))
        period = settings.revisit_period
        chosen = plan_revisits(
            settings.revisit,
            arrival_rate=_rates(totals, everything, period) * period,
            xi=_worths(totals, everything, self.prior_worth),
            mu=np.array([self._decay(s) for s in ready]),
            cost=np.array([self.cost_of(s.host) for s in ready]),
            since_visit=np.maximum(self.wall_clock() - totals["last_visit"], 0.0) / period,
            budget=settings.revisit_budget,
        )
        planned = []
        for index in chosen:
            source = ready[index]
            self._planned.add(source.url_id)
            planned.append(
                Candidate(
                    source.url_id,
                    source.url,
                    source.host,
                    source.depth,
                    REVISIT_SCORE,
                    revisit=True,
                )
            )
        return planned

    def _decay(self, source: storage.SourceRecord) -> float:
        decay = self._decays.get(source.url_id)
        if decay is None:
            decay = self._decays[source.url_id] = self.settings.decay_per_period(source.url)
        return decay


def _rates(
    totals: dict[str, np.ndarray], everything: dict[str, np.ndarray], period: float
) -> np.ndarray:
    """Arrival rates (items a second) of the sources whose `totals` are given, among
    `everything` the crawl knows.

    The prior of each is what all sources together have shown (empirical Bayes), so
    a source not yet re-visited looks like the average one and gets its turn.
    """
    pooled = poisson_rates(
        everything["items"].sum(),
        everything["exposure"].sum(),
        prior_rate=PRIOR_RATE / period,
        prior_weight=period,
    )
    return poisson_rates(
        totals["items"],
        totals["exposure"],
        prior_rate=float(pooled),
        prior_weight=period,  # one period's worth of exposure
    )


def _worths(
    totals: dict[str, np.ndarray], everything: dict[str, np.ndarray], prior_worth: float
) -> np.ndarray:
    """Mean worths of the items of the sources whose `totals` are given, with the
    pooled prior of `_rates`."""
    pooled = mean_worths(
        everything["worth_total"].sum(),
        everything["worth_items"].sum(),
        prior_mean=prior_worth,
        prior_weight=PRIOR_WEIGHT,
    )
    return mean_worths(
        totals["worth_total"],
        totals["worth_items"],
        prior_mean=float(pooled),
        prior_weight=PRIOR_WEIGHT,
    )


def learned_rates(sources: Sequence[storage.SourceRecord], *, period: float) -> dict[str, float]:
    """The arrival rate (items a second) the crawler plans with for each of a crawl's
    `sources` (all of them, as `storage.load_sources` returns them), by URL, re-visited
    every `period` seconds."""
    totals = _totals(list(sources))
    rates = _rates(totals, totals, period)
    return {source.url: float(rate) for source, rate in zip(sources, rates, strict=True)}


def _totals(sources: list[storage.SourceRecord]) -> dict[str, np.ndarray]:
    names = (
        "items",
        "exposure",
        "worth_total",
        "worth_items",
        "last_visit",
    )
    return {
        name: np.fromiter((getattr(s, name) for s in sources), np.float64, len(sources))
        for name in names
    }


def _with_signature(source: storage.SourceRecord, signature: PageSignature) -> storage.SourceRecord:
    return dataclasses.replace(
        source,
        etag=signature.etag,
        last_modified=signature.last_modified,
        fingerprint=signature.fingerprint,
    )
