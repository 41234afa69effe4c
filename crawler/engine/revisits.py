"""Re-visiting sources: finding the pages that keep publishing, learning what their
re-visits find, and choosing which to re-visit each period.

Avrachenkov & Borkar's model, live: a source i publishes new items (links) at rate
Lambda_i, each worth xi_i (the relevance of the items once fetched), whose interest
decays at the topic's rate mu (`interest_half_life`, or a half-life set for the URLs
under a prefix, `half_lives`). Every `period` seconds the
sources of highest priority are re-visited while their costs fit `budget`; a source
costs one fetch, more on a host whose delay is longer than the crawl's. Their new links
enter the frontier and are fetched as discovery, which shares the same fetchers.

A page becomes a source when it is a seed or links to at least `min_links` pages in
scope. Its first fetch starts the clock; each re-visit (a conditional GET) adds the new
URLs it revealed and the time since the visit before, from which Lambda_i is estimated
(a Poisson rate with a prior); whether the page changed is counted too, for a change-rate
estimate (Cho & Garcia-Molina) that `crawler status` shows beside it.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

import storage
from crawler.config import defaults
from crawler.pipeline.writer import Committed, PageSignature
from policies import Candidate
from policies.ephemeral import plan_revisits
from policies.registry import names
from policies.source_rates import mean_worths, poisson_rates

PRIOR_WEIGHT = 1.0  # in items: the worth prior is as strong as one scored item
MAX_ITEMS_TRACKED = 100_000  # new items whose worth is still to be learned
REVISIT_SCORE = 1.0  # a re-visit's link score: the most relevant-looking


@dataclass(frozen=True, slots=True, kw_only=True)
class RevisitSettings:
    policy: str = defaults.REVISIT  # a registered re-visit policy, or off
    period: float = defaults.REVISIT_PERIOD
    budget: float = defaults.REVISIT_BUDGET
    interest_half_life: float = defaults.INTEREST_HALF_LIFE
    half_lives: tuple[tuple[str, float], ...] = ()  # (URL prefix, seconds): the longest wins
    min_links: int = defaults.SOURCE_MIN_LINKS
    max_sources: int = defaults.MAX_SOURCES
    prior_rate: float = 1.0  # new items a period expected of a source not yet re-visited
    prior_worth: float = 0.1  # relevance expected of a source's items before any is scored

    def __post_init__(self) -> None:
        known = (*names("revisit"), "off")
        if self.policy not in known:
            raise ValueError(f"revisit must be one of {', '.join(known)}, got {self.policy!r}")
        for name in ("period", "budget", "interest_half_life", "prior_rate", "prior_worth"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a positive number, got {value}")
        for prefix, seconds in self.half_lives:
            if not (math.isfinite(seconds) and seconds > 0):
                raise ValueError(f"the half-life of {prefix!r} must be positive, got {seconds}")
        if self.min_links < 1 or self.max_sources < 1:
            raise ValueError("min_links and max_sources must be at least 1")

    @property
    def enabled(self) -> bool:
        return self.policy != "off"

    def decay_per_period(self, url: str) -> float:
        """mu of the source at `url`, per period."""
        half_life = self.interest_half_life
        matched = -1
        for prefix, seconds in self.half_lives:
            if url.startswith(prefix) and len(prefix) > matched:
                half_life, matched = seconds, len(prefix)
        return math.log(2.0) / half_life * self.period


@dataclass(frozen=True, slots=True)
class RevisitResult:
    """What one re-visit found, for the metrics."""

    result: str  # new_items | unchanged | not_modified | failed
    new_items: int


class Revisits:
    def __init__(
        self,
        settings: RevisitSettings,
        *,
        seeds: Iterable[str],
        cost_of: Callable[[str], float] = lambda host: 1.0,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.settings = settings
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
            and (candidate.url in self.seeds or write.links_in_scope >= self.settings.min_links)
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
        rates, worths = _estimate(settings, totals, _totals(list(self.sources.values())))
        chosen = plan_revisits(
            settings.policy,
            arrival_rate=rates * settings.period,
            xi=worths,
            mu=np.array([self._decay(s) for s in ready]),
            cost=np.array([self.cost_of(s.host) for s in ready]),
            since_visit=np.maximum(self.wall_clock() - totals["last_visit"], 0.0) / settings.period,
            budget=settings.budget,
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


def _estimate(
    settings: RevisitSettings,
    totals: dict[str, np.ndarray],
    everything: dict[str, np.ndarray],
) -> tuple[np.ndarray, np.ndarray]:
    """Arrival rates (items a second) and mean worths of the items of the sources whose
    `totals` are given, among `everything` the crawl knows.

    The prior of each is what all sources together have shown (empirical Bayes), so
    a source not yet re-visited looks like the average one and gets its turn.
    """
    pooled_rate = poisson_rates(
        everything["items"].sum(),
        everything["exposure"].sum(),
        prior_rate=settings.prior_rate / settings.period,
        prior_weight=settings.period,
    )
    pooled_worth = mean_worths(
        everything["worth_total"].sum(),
        everything["worth_items"].sum(),
        prior_mean=settings.prior_worth,
        prior_weight=PRIOR_WEIGHT,
    )
    rates = poisson_rates(
        totals["items"],
        totals["exposure"],
        prior_rate=float(pooled_rate),
        prior_weight=settings.period,  # one period's worth of exposure
    )
    worths = mean_worths(
        totals["worth_total"],
        totals["worth_items"],
        prior_mean=float(pooled_worth),
        prior_weight=PRIOR_WEIGHT,
    )
    return rates, worths


def learned_rates(
    settings: RevisitSettings, sources: Sequence[storage.SourceRecord]
) -> dict[str, float]:
    """The arrival rate (items a second) the crawler plans with for each of a crawl's
    `sources` (all of them, as `storage.load_sources` returns them), by URL."""
    totals = _totals(list(sources))
    rates, _ = _estimate(settings, totals, totals)
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
