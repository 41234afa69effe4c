"""Ephemeral sources for the testbed: pages that keep publishing items whose worth decays.

Source i publishes items as a Poisson process of rate Lambda_i (per second). An item is
worth w when new, exponential with mean xi_i (Avrachenkov & Borkar, eq. 19), and
w exp(-mu_i t) at age t. The source's page lists its newest items; each item's page is
on the topic in proportion to its worth. The ledger records what the crawler collected:
each item's worth at the moment it was first fetched.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

from testbed.web import FILLER, TOPIC_WORDS

LISTING = 100  # items a source's page lists, newest first


@dataclass(frozen=True, slots=True)
class EphemeralSource:
    xi: float  # mean worth of a new item
    mu: float  # decay of an item's worth, per second
    arrival_rate: float  # items per second

    def __post_init__(self) -> None:
        for name in ("xi", "mu", "arrival_rate"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"an ephemeral source's {name} must be positive, got {value}")


@dataclass(frozen=True, slots=True)
class Collected:
    time: float  # seconds since the sources started
    source: int
    item: int
    worth: float  # the item's worth when it was fetched


@dataclass(slots=True)
class _Stream:
    spec: EphemeralSource
    rng: random.Random
    arrivals: list[float] = field(default_factory=list)  # seconds since the start
    worths: list[float] = field(default_factory=list)  # worth when new
    fetched: set[int] = field(default_factory=set)


class EphemeralSources:
    """The sources' items and the ledger; time is seconds since `start` (the caller's clock)."""

    def __init__(self, specs: list[EphemeralSource], *, seed: int = 0) -> None:
        self.specs = list(specs)
        self._streams = [
            _Stream(spec, random.Random(seed * 7919 + i)) for i, spec in enumerate(specs)
        ]
        self.ledger: list[Collected] = []

    def published(self, source: int, now: float) -> int:
        """Items source `source` has published by `now`."""
        stream = self._streams[source]
        while not stream.arrivals or stream.arrivals[-1] <= now:
            last = stream.arrivals[-1] if stream.arrivals else 0.0
            stream.arrivals.append(last + stream.rng.expovariate(stream.spec.arrival_rate))
            stream.worths.append(stream.rng.expovariate(1.0 / stream.spec.xi))
        return len(stream.arrivals) - 1  # the last one is still to come

    def listing(self, source: int, now: float) -> list[int]:
        count = self.published(source, now)
        return list(range(count - 1, max(count - LISTING, 0) - 1, -1))

    def arrival_times(self, source: int) -> list[float]:
        """When the source's items were published so far (seconds since the start)."""
        return self._streams[source].arrivals[:-1]  # the last one is still to come

    def worth_when_new(self, source: int, item: int) -> float:
        return self._streams[source].worths[item]

    def fetch(self, source: int, item: int, now: float) -> bool:
        """An item's page is asked for: credit its current worth to the ledger, once.
        False when no such item has been published."""
        if item >= self.published(source, now):
            return False
        stream = self._streams[source]
        if item not in stream.fetched:
            stream.fetched.add(item)
            age = now - stream.arrivals[item]
            worth = stream.worths[item] * math.exp(-stream.spec.mu * age)
            self.ledger.append(Collected(now, source, item, worth))
        return True

    def collected(self, since: float = 0.0, until: float = math.inf) -> float:
        return sum(entry.worth for entry in self.ledger if since <= entry.time < until)

    def item_words(self, source: int, item: int, count: int) -> list[str]:
        """The item's text: topic words in proportion to its worth when new."""
        density = min(0.95, self.worth_when_new(source, item))
        rng = random.Random(source * 1_000_003 + item)
        return [
            rng.choice(TOPIC_WORDS) if rng.random() < density else rng.choice(FILLER)
            for _ in range(count)
        ]
