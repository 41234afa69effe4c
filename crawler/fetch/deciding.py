"""A URL's outcome, decided in one place from the facts its visit gathered.

A visit ends where it must (no answer, robots.txt, a sitemap's turn, a redirect not
followed) or with an answer to judge; either way it gathers `Facts`, and `decide` alone
turns them into the outcome and says whether the URL is tried again: a 429/503 or an
unavailable robots.txt while tries remain (`max_retries`, known only here), after which
the 429/503 is recorded as the http_error it is. The stages after a visit add what they
found to the outcome it came to: a page that could not be read, a variant of a canonical
URL fetched already, a bug met visiting or processing it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from crawler.outcomes import Outcome

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
THROTTLE_STATUSES = frozenset({429, 503})


@dataclass(frozen=True, slots=True)
class Facts:
    """What a visit found: what ended it before an answer to judge (`met`: no answer,
    robots.txt, a sitemap's turn, a redirect not followed), or its answer; for the
    stages after it, `met` is the outcome the visit came to, and they add what they
    found (`unreadable`, `variant`, `failed`)."""

    met: Outcome | None = None
    status: int | None = None
    truncated: bool = False  # the body passed the size limit
    html: bool = False
    revisit: bool = False
    tries: int = 0  # the URL's tries before this one
    unreadable: bool = False  # an HTML page whose body could not be decoded or parsed
    variant: bool = False  # a page whose canonical URL is fetched already
    failed: bool = False  # a bug met visiting or processing the URL


class Decision(NamedTuple):
    outcome: Outcome
    again: bool  # back to the frontier for another try, not recorded


def decide(facts: Facts, *, max_retries: int) -> Decision:
    """The outcome `facts` come to, and whether the URL is tried again."""
    if facts.failed:
        return Decision(Outcome.INTERNAL_ERROR, again=False)
    outcome = _outcome(facts)
    tries_left = facts.tries < max_retries
    if outcome is Outcome.THROTTLED and not tries_left:
        return Decision(Outcome.HTTP_ERROR, again=False)  # its tries spent: its answer
    return Decision(outcome, again=outcome in _TRIED_AGAIN and tries_left)


_TRIED_AGAIN = frozenset({Outcome.THROTTLED, Outcome.DEFERRED})

# the `max_retries` of the stages after a visit's settlement: its URL is not tried again
NO_TRIES_LEFT = 0


def _outcome(facts: Facts) -> Outcome:
    outcome = _answer(facts) if facts.met is None else facts.met
    if outcome is Outcome.OK and facts.variant:
        return Outcome.CANONICAL_VARIANT
    if outcome is Outcome.OK and facts.unreadable:
        return Outcome.BAD_CONTENT
    return outcome


def _answer(facts: Facts) -> Outcome:
    status = facts.status
    if status is None:
        raise ValueError("facts of a visit hold neither an answer's status nor what ended it")
    if status == 304 and facts.revisit:
        return Outcome.NOT_MODIFIED
    if status in THROTTLE_STATUSES:
        return Outcome.THROTTLED
    if status >= 400 or status in REDIRECT_STATUSES:
        return Outcome.HTTP_ERROR
    if facts.truncated:
        return Outcome.TOO_LARGE
    if not facts.html:
        return Outcome.NOT_HTML
    return Outcome.OK
