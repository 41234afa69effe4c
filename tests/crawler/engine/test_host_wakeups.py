"""`HostWakeups`: when each parked host's turn comes, the timer the dispatcher sleeps on."""

from __future__ import annotations

from crawler.engine.host_wakeups import HostWakeups


def test_hosts_wake_in_the_order_of_their_times_each_once() -> None:
    wakeups = HostWakeups()
    wakeups.schedule("b", 2.0)
    wakeups.schedule("a", 1.0)
    wakeups.schedule("c", 3.0)
    assert wakeups.next_at() == 1.0
    assert wakeups.due(0.5) == []
    assert wakeups.due(2.0) == ["a", "b"]
    assert wakeups.due(2.0) == []  # each once
    assert wakeups.next_at() == 3.0
    assert len(wakeups) == 1


def test_a_host_scheduled_again_keeps_its_latest_time_and_a_cancelled_one_none() -> None:
    wakeups = HostWakeups()
    wakeups.schedule("a", 1.0)
    wakeups.schedule("a", 5.0)  # its request was answered later: a later turn
    wakeups.schedule("b", 2.0)
    wakeups.cancel("b")  # a request in flight: no time yet
    assert wakeups.next_at() == 5.0
    assert wakeups.due(4.0) == []
    assert wakeups.due(5.0) == ["a"]
    assert wakeups.next_at() is None


def test_stale_entries_do_not_pile_up() -> None:
    wakeups = HostWakeups()
    for step in range(10_000):
        wakeups.schedule("a", float(step))
    assert len(wakeups._heap) <= 2 * len(wakeups) + 64
    assert wakeups.due(9_999.0) == ["a"]
