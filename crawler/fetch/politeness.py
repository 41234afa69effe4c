"""Per-host politeness: when may the next request to a host start.

A hard constraint, never traded for speed. Each host has a slot (Scrapy's `Slot`): at
most `per_host_concurrency` requests at once, and the next request no sooner than
max(delay, Crawl-delay) * backoff after the end of the previous response. 429 and 503
double the backoff and honour Retry-After; repeated failures double it too; successes
bring it back to 1. State changes are pure: every call is given `now`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum

from crawler.fetch.deciding import THROTTLE_STATUSES

BACKOFF_FACTOR = 2.0
RECOVERY_FACTOR = 0.5  # each success halves the backoff, down to 1
FAILURES_BEFORE_BACKOFF = 2  # connection errors and timeouts in a row


class Feedback(Enum):
    SUCCESS = "success"  # the host answered (any status but 429/503 counts)
    THROTTLED = "throttled"  # 429 or 503
    FAILURE = "failure"  # no answer: timeout, reset, refused


def answer_feedback(status: int) -> Feedback:
    """What an answer of `status` tells its host's politeness."""
    return Feedback.THROTTLED if status in THROTTLE_STATUSES else Feedback.SUCCESS


@dataclass(slots=True)
class HostSlot:
    in_flight: int = 0
    not_before: float = 0.0  # clock time before which no request may start
    crawl_delay: float = 0.0  # from robots.txt
    backoff: float = 1.0
    failures: int = 0  # consecutive failures
    # totals, for reports: requests ended, and seconds the host was closed after them
    requests: int = 0
    closed_seconds: float = 0.0


class Politeness:
    def __init__(
        self, *, delay: float, per_host_concurrency: int = 1, max_backoff: float = 600.0
    ) -> None:
        self.delay = delay
        self.per_host_concurrency = per_host_concurrency
        self.max_backoff = max_backoff
        self._slots: dict[str, HostSlot] = {}
        # hosts whose turn may have moved (a request ended, a slot given back, a deferral)
        # since the crawl last asked: it looks again at when each is ready
        self._changed: set[str] = set()

    def slot(self, host: str) -> HostSlot:
        slot = self._slots.get(host)
        if slot is None:
            slot = self._slots[host] = HostSlot()
        return slot

    def ready(self, host: str, now: float) -> bool:
        slot = self._slots.get(host)
        if slot is None:
            return True
        return slot.in_flight < self.per_host_concurrency and now >= slot.not_before

    def ready_at(self, host: str) -> float | None:
        """When the host's delay ends; None while all its request slots are taken."""
        slot = self._slots.get(host)
        if slot is None:
            return 0.0
        if slot.in_flight >= self.per_host_concurrency:
            return None
        return slot.not_before

    def turn_comes(self, host: str, now: float) -> bool:
        """Whether `host` is closed only by its usual turn: its request slots taken or
        its usual interval running, not a backoff, a Retry-After or a deferral."""
        slot = self._slots.get(host)
        if slot is None:
            return True
        if slot.backoff > 1.0 or slot.failures:
            return False
        return slot.not_before - now <= self.interval(host)

    def slots(self) -> Iterator[tuple[str, HostSlot]]:
        return iter(self._slots.items())

    def __len__(self) -> int:
        return len(self._slots)

    def idle(self, host: str, now: float) -> bool:
        """No request to `host` in flight and no delay owed: its slot holds nothing that
        a fresh one would not."""
        slot = self._slots.get(host)
        return slot is None or (slot.in_flight == 0 and now >= slot.not_before)

    def forget(self, host: str) -> None:
        """Drop `host`'s slot (its state kept elsewhere, e.g. in the database)."""
        self._slots.pop(host, None)
        self._changed.add(host)

    def drain_changed(self) -> set[str]:
        """The hosts whose turn may have moved since the last call."""
        changed, self._changed = self._changed, set()
        return changed

    def interval(self, host: str) -> float:
        """The gap owed after a response from `host`, before backoff is applied."""
        slot = self._slots.get(host)
        return max(self.delay, 0.0 if slot is None else slot.crawl_delay)

    def start(self, host: str, now: float) -> None:
        slot = self.slot(host)
        if slot.in_flight >= self.per_host_concurrency or now < slot.not_before:
            raise RuntimeError(f"politeness: {host} is not ready")
        slot.in_flight += 1

    def finish(
        self,
        host: str,
        now: float,
        feedback: Feedback = Feedback.SUCCESS,
        retry_after: float | None = None,
    ) -> None:
        """A request to `host` ended at `now` (its response read, or its failure seen)."""
        slot = self.slot(host)
        slot.in_flight = max(0, slot.in_flight - 1)
        if feedback is Feedback.SUCCESS:
            slot.failures = 0
            slot.backoff = max(1.0, slot.backoff * RECOVERY_FACTOR)
        elif feedback is Feedback.THROTTLED:
            slot.backoff = self._grown(slot)
        else:
            slot.failures += 1
            if slot.failures >= FAILURES_BEFORE_BACKOFF:
                slot.backoff = self._grown(slot)
        wait = min(self.interval(host) * slot.backoff, self.max_backoff)
        if retry_after is not None:  # the server said when: that, and no sooner
            wait = max(wait, min(retry_after, self.max_backoff))
        elif feedback is not Feedback.SUCCESS:
            # even with no delay configured, a struggling host gets time to recover
            wait = max(wait, min(slot.backoff - 1.0, self.max_backoff))
        slot.requests += 1
        self._close(slot, now, now + wait)
        self._changed.add(host)

    def release(self, host: str) -> None:
        """Give back a slot that made no request (no delay is owed)."""
        slot = self.slot(host)
        slot.in_flight = max(0, slot.in_flight - 1)
        self._changed.add(host)

    def defer(self, host: str, now: float, until: float) -> None:
        """Leave `host` alone until `until` (e.g. its robots.txt is unavailable)."""
        self._close(self.slot(host), now, until)
        self._changed.add(host)

    def set_crawl_delay(self, host: str, seconds: float) -> None:
        self.slot(host).crawl_delay = max(0.0, seconds)
        self._changed.add(host)

    def waiting_hosts(self, hosts: list[str], now: float) -> int:
        """How many of `hosts` are held back by politeness at `now`."""
        return sum(1 for host in hosts if not self.ready(host, now))

    @staticmethod
    def _close(slot: HostSlot, now: float, until: float) -> None:
        opened = max(slot.not_before, now)
        slot.not_before = max(slot.not_before, until)
        slot.closed_seconds += slot.not_before - opened

    def _grown(self, slot: HostSlot) -> float:
        return min(max(slot.backoff, 1.0) * BACKOFF_FACTOR, self.max_backoff)
