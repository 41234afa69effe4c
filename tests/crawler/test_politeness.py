"""Politeness as pure state; the gaps a real server sees are in test_crawl_politeness."""

from __future__ import annotations

import pytest

from crawler.fetch.politeness import Feedback, Politeness


def test_one_request_at_a_time_and_the_delay_counts_from_the_response_end() -> None:
    polite = Politeness(delay=2.0)
    assert polite.ready("a", 0.0)
    polite.start("a", 0.0)
    assert not polite.ready("a", 100.0)  # still in flight, however long
    assert polite.ready_at("a") is None
    assert polite.ready("b", 0.0)  # other hosts are independent
    polite.finish("a", 10.0)
    assert not polite.ready("a", 11.9)
    assert polite.ready("a", 12.0)
    with pytest.raises(RuntimeError, match="not ready"):
        polite.start("a", 11.0)


def test_crawl_delay_wins_when_longer_than_the_delay() -> None:
    polite = Politeness(delay=1.0)
    polite.set_crawl_delay("a", 5.0)
    polite.start("a", 0.0)
    polite.finish("a", 1.0)
    assert polite.ready_at("a") == 6.0


def test_throttling_doubles_the_backoff_and_success_brings_it_back() -> None:
    polite = Politeness(delay=1.0, max_backoff=100.0)
    now = 0.0
    for expected_gap in (2.0, 4.0, 8.0):
        polite.start("a", now)
        polite.finish("a", now, Feedback.THROTTLED)
        assert polite.ready_at("a") == pytest.approx(now + expected_gap)
        now += expected_gap
    for expected_gap in (4.0, 2.0, 1.0, 1.0):
        polite.start("a", now)
        polite.finish("a", now, Feedback.SUCCESS)
        assert polite.ready_at("a") == pytest.approx(now + expected_gap)
        now += expected_gap


def test_retry_after_is_honoured_and_capped() -> None:
    polite = Politeness(delay=0.0, max_backoff=60.0)
    polite.start("a", 0.0)
    polite.finish("a", 0.0, Feedback.THROTTLED, retry_after=30.0)
    assert polite.ready_at("a") == 30.0
    polite.start("a", 30.0)
    polite.finish("a", 30.0, Feedback.THROTTLED, retry_after=10_000.0)
    assert polite.ready_at("a") == 90.0


def test_repeated_failures_back_off_even_without_a_delay() -> None:
    polite = Politeness(delay=0.0)
    polite.start("a", 0.0)
    polite.finish("a", 0.0, Feedback.FAILURE)
    polite.start("a", 0.0)
    polite.finish("a", 0.0, Feedback.FAILURE)
    assert polite.slot("a").backoff == 2.0
    assert polite.ready_at("a") == pytest.approx(1.0)


def test_per_host_concurrency_allows_that_many_at_once() -> None:
    polite = Politeness(delay=0.0, per_host_concurrency=2)
    polite.start("a", 0.0)
    polite.start("a", 0.0)
    assert not polite.ready("a", 0.0)
    polite.release("a")
    assert polite.ready("a", 0.0)


def test_defer_and_waiting_hosts() -> None:
    polite = Politeness(delay=0.0)
    polite.defer("a", 5.0, 50.0)
    assert polite.waiting_hosts(["a", "b"], 10.0) == 1
    assert polite.waiting_hosts(["a", "b"], 50.0) == 0


def test_closed_seconds_count_each_moment_once() -> None:
    polite = Politeness(delay=2.0, per_host_concurrency=2)
    polite.start("a", 0.0)
    polite.start("a", 0.0)
    polite.finish("a", 1.0)  # closed 1 .. 3
    polite.finish("a", 2.0)  # closed on to 4: one more second, not two
    polite.defer("a", 3.0, 10.0)  # on to 10
    slot = polite.slot("a")
    assert slot.requests == 2
    assert slot.closed_seconds == pytest.approx(9.0)


def test_a_host_whose_turn_comes_is_busy_or_in_its_usual_interval_only() -> None:
    polite = Politeness(delay=2.0)
    assert polite.turn_comes("new", 0.0)
    polite.start("a", 0.0)
    assert polite.turn_comes("a", 0.0)  # in flight: its turn comes when the response ends
    polite.finish("a", 1.0)
    assert polite.turn_comes("a", 1.0)  # its usual two seconds
    polite.start("b", 0.0)
    polite.finish("b", 1.0, Feedback.THROTTLED)
    assert not polite.turn_comes("b", 1.0)  # backing off: not soon
    polite.defer("c", 0.0, until=60.0)
    assert not polite.turn_comes("c", 0.0)  # its robots.txt is unavailable


def test_the_hosts_whose_turn_moved_are_told_once() -> None:
    politeness = Politeness(delay=1.0)
    politeness.start("a", 0.0)
    politeness.start("b", 0.0)
    assert politeness.drain_changed() == set()  # taking a turn moves no other's
    politeness.finish("a", 0.5)
    politeness.release("b")
    politeness.defer("c", 0.5, 30.0)
    assert politeness.drain_changed() == {"a", "b", "c"}
    assert politeness.drain_changed() == set()
    politeness.set_crawl_delay("d", 5.0)
    politeness.forget("a")
    assert politeness.drain_changed() == {"a", "d"}
