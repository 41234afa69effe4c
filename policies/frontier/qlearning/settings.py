"""The Q-learning frontier's settings: one frozen object, every field checked when it is
built (`QLearningFrontier` takes it whole; the registry builds it from keywords)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields

# a raised family goes back to its own estimates after this many of its raised pages in
# a row were not relevant and revealed no new link. A table of contents' chapter pages
# reveal nothing new where its part pages reveal the sections (PostgreSQL's root: up
# to 24 chapters between two parts); a family that never leads on costs this many pages,
# not its whole size (docs/frontier.md)
RELATIVES_LOWERED_AFTER = 30

_Check = Callable[[object], bool]


@dataclass(frozen=True, slots=True, kw_only=True)
class QLearningSettings:
    # eq. (10)'s discount of what a fetch reveals
    gamma: float = 0.5
    # a fetch's revealed children counted: its best this many (their values are shared
    # with their parent's, and a page of many links would be worth unboundedly much)
    horizon: int = 10
    # URLs re-ranked after each batch the link model learns
    rerank_budget: int = 1_000
    # the running rewards' and the subsidy's memory: each new value weighs 1 - this
    subsidy_memory: float = 0.9
    # a URL waits while a busy host holds one ranked more than 1 / patience times as
    # high (None: the policy's own, 0.5)
    patience: float | None = None
    # a host tried fewer times than this is not waited for, nor kept waiting
    patient_after: int = 3
    # the crawl's relevance threshold: a page this relevant raises its relatives
    relevant_at: float = 0.1
    # a relevant page raises the links its discoverer revealed with it (1), and those
    # its discoverer was revealed with (2); 0: none
    relative_levels: int = 2
    # a raised family's links go back to their own estimates once this many of its
    # raised links in a row were fetched to no relevant page and no new link (None:
    # never)
    relatives_lowered_after: int | None = RELATIVES_LOWERED_AFTER
    # a raised page at `relevant_at` starts its family's misses again, as one that
    # leads on does; False: only one that leads on, and a relevant one raises the
    # family again until its next miss
    relatives_kept_by_relevance: bool = True

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            rule, check = _RULES[field.name]
            if not check(value):
                raise ValueError(f"a frontier's {field.name} is {rule}, not {value!r}")


def _number_in(low: float, high: float, *, high_included: bool = True) -> _Check:
    def check(value: object) -> bool:
        if isinstance(value, bool) or not isinstance(value, int | float):
            return False
        return low <= value <= high if high_included else low <= value < high

    return check


def _int_from(low: int) -> _Check:
    def check(value: object) -> bool:
        return isinstance(value, int) and not isinstance(value, bool) and value >= low

    return check


def _or_none(check: _Check) -> _Check:
    return lambda value: value is None or check(value)


_RULES: dict[str, tuple[str, _Check]] = {
    "gamma": ("0 or more and below 1", _number_in(0.0, 1.0, high_included=False)),
    "horizon": ("1 or more", _int_from(1)),
    "rerank_budget": ("1 or more", _int_from(1)),
    "subsidy_memory": ("0 or more and below 1", _number_in(0.0, 1.0, high_included=False)),
    "patience": ("between 0 and 1, or None", _or_none(_number_in(0.0, 1.0))),
    "patient_after": ("0 or more", _int_from(0)),
    "relevant_at": ("between 0 and 1", _number_in(0.0, 1.0)),
    "relative_levels": ("0 or more", _int_from(0)),
    "relatives_lowered_after": ("1 or more, or None", _or_none(_int_from(1))),
    "relatives_kept_by_relevance": ("True or False", lambda value: isinstance(value, bool)),
}
