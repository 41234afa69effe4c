"""A URL's outcome, decided once from the facts its visit gathered and its tries so far."""

from __future__ import annotations

import pytest

from crawler.fetch.deciding import NO_TRIES_LEFT, Decision, Facts, decide
from crawler.outcomes import Outcome

MAX_RETRIES = 2


def answer(
    status: int, *, html: bool = True, truncated: bool = False, revisit: bool = False
) -> Facts:
    return Facts(status=status, html=html, truncated=truncated, revisit=revisit)


@pytest.mark.parametrize(
    ("facts", "outcome"),
    [
        (answer(200), Outcome.OK),
        (answer(200, html=False), Outcome.NOT_HTML),
        (answer(200, truncated=True), Outcome.TOO_LARGE),
        (answer(404), Outcome.HTTP_ERROR),
        (answer(302), Outcome.HTTP_ERROR),  # a redirect without a Location to follow
        (answer(304, revisit=True), Outcome.NOT_MODIFIED),
        (answer(304), Outcome.OK),  # a 304 nobody asked for is read as a page
        (Facts(met=Outcome.ROBOTS), Outcome.ROBOTS),
        (Facts(met=Outcome.TIMEOUT), Outcome.TIMEOUT),
        (Facts(met=Outcome.REDIRECT_LOOP, status=301), Outcome.REDIRECT_LOOP),
    ],
)
def test_an_answer_or_what_ended_the_visit_is_recorded_as_what_it_is(
    facts: Facts, outcome: Outcome
) -> None:
    assert decide(facts, max_retries=MAX_RETRIES) == Decision(outcome, again=False)


@pytest.mark.parametrize("status", [429, 503])
def test_a_throttled_url_is_tried_again_until_its_tries_are_spent(status: int) -> None:
    left = Facts(status=status, html=True, tries=MAX_RETRIES - 1)
    assert decide(left, max_retries=MAX_RETRIES) == Decision(Outcome.THROTTLED, again=True)
    spent = Facts(status=status, html=True, tries=MAX_RETRIES)
    assert decide(spent, max_retries=MAX_RETRIES) == Decision(Outcome.HTTP_ERROR, again=False)


def test_a_url_whose_robots_txt_is_unavailable_is_deferred_then_recorded_as_deferred() -> None:
    left = Facts(met=Outcome.DEFERRED, tries=0)
    assert decide(left, max_retries=MAX_RETRIES) == Decision(Outcome.DEFERRED, again=True)
    spent = Facts(met=Outcome.DEFERRED, tries=MAX_RETRIES)
    assert decide(spent, max_retries=MAX_RETRIES) == Decision(Outcome.DEFERRED, again=False)


def test_a_url_whose_turn_went_elsewhere_is_not_a_try() -> None:
    for turn in (Outcome.ROBOTS_FIRST, Outcome.SITEMAP_FIRST):
        spent = Facts(met=turn, tries=MAX_RETRIES)
        assert decide(spent, max_retries=MAX_RETRIES) == Decision(turn, again=False)


def test_facts_without_an_answer_or_an_end_are_refused() -> None:
    with pytest.raises(ValueError, match="neither an answer's status nor what ended"):
        decide(Facts(), max_retries=MAX_RETRIES)


@pytest.mark.parametrize(
    ("facts", "outcome"),
    [
        (Facts(status=200, html=True, unreadable=True), Outcome.BAD_CONTENT),
        (Facts(met=Outcome.OK, unreadable=True), Outcome.BAD_CONTENT),
        (Facts(met=Outcome.OK, variant=True), Outcome.CANONICAL_VARIANT),
        (Facts(met=Outcome.NOT_HTML, unreadable=True), Outcome.NOT_HTML),  # never read
        (Facts(met=Outcome.HTTP_ERROR, unreadable=True), Outcome.HTTP_ERROR),
        (Facts(failed=True), Outcome.INTERNAL_ERROR),  # a bug met visiting the URL
        (Facts(met=Outcome.OK, failed=True), Outcome.INTERNAL_ERROR),  # or processing it
        (Facts(status=429, failed=True), Outcome.INTERNAL_ERROR),
    ],
)
def test_what_processing_found_decides_the_outcome_of_a_page(
    facts: Facts, outcome: Outcome
) -> None:
    assert decide(facts, max_retries=MAX_RETRIES) == Decision(outcome, again=False)


def test_a_url_past_its_settlement_is_not_tried_again() -> None:
    deferred = Facts(met=Outcome.DEFERRED)
    assert decide(deferred, max_retries=NO_TRIES_LEFT) == Decision(Outcome.DEFERRED, again=False)
