"""A host's turn: taken and given back by one `async with`, the delay owed only when a
request was made, and the host's slot and the waiting counts restored however the block
or the wait ends (cancellations as httpcore's tests/test_cancellations.py tests them)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

import pytest

import storage
from crawler.fetch.admission import Admission
from crawler.fetch.host_memory import HostMemory
from crawler.fetch.host_turns import HostTurns, Turn
from crawler.fetch.politeness import Feedback, Politeness
from crawler.fetch.robots import RobotsCache

HOST = "a.example"
DELAY = 2.0


class Shutdown(BaseException):
    """A BaseException that is no Exception, as KeyboardInterrupt is."""


class Clock:
    def __init__(self) -> None:
        self.now = 100.0
        self.fail: BaseException | None = None  # raised by the next reading

    def __call__(self) -> float:
        if self.fail is not None:
            raise self.fail
        return self.now


@dataclass
class Parts:
    clock: Clock
    politeness: Politeness
    admission: Admission
    hosts: HostMemory
    turns: HostTurns

    def owe_delay(self, host: str = HOST) -> None:
        """A request to `host` just ended: its next turn comes in DELAY seconds."""
        self.politeness.start(host, self.clock.now)
        self.politeness.finish(host, self.clock.now)

    async def until(self, condition: Callable[[], bool]) -> None:
        for _ in range(100):
            if condition():
                return
            await asyncio.sleep(0)
        raise AssertionError("the condition never held")


@pytest.fixture
async def parts(db_url: str) -> AsyncIterator[Parts]:
    db = storage.open_engine(db_url)
    clock = Clock()
    politeness = Politeness(delay=DELAY)
    admission = Admission(concurrency=1, target=1)
    robots = RobotsCache(user_agent="testbot", ttl=86_400.0, retry=600.0)
    hosts = HostMemory(db=db, politeness=politeness, robots=robots, capacity=10, clock=clock)
    turns = HostTurns(politeness=politeness, hosts=hosts, admission=admission, clock=clock)
    yield Parts(clock, politeness, admission, hosts, turns)
    await db.dispose()


async def visit(parts: Parts, *, hold: asyncio.Event | None = None, answered: bool = False) -> Turn:
    """A visit of HOST: its turn, an answer if `answered`, then a wait for `hold`
    holding the turn."""
    parts.admission.started()
    async with parts.turns.take(HOST) as turn:
        if answered:
            turn.answered(Feedback.SUCCESS)
        if hold is not None:
            await hold.wait()
    return turn


async def test_a_turn_holds_the_slot_and_gives_it_back_owing_nothing_without_a_request(
    parts: Parts,
) -> None:
    async with parts.turns.take(HOST) as turn:
        assert turn.waited == 0.0
        assert not parts.politeness.ready(HOST, parts.clock.now)
    assert parts.politeness.ready(HOST, parts.clock.now)
    assert parts.politeness.slot(HOST).requests == 0
    assert parts.hosts.take_dirty() == []  # nothing changed: nothing to save


async def test_an_answer_owes_the_delay_from_the_end_of_the_turn(parts: Parts) -> None:
    async with parts.turns.take(HOST) as turn:
        parts.clock.now += 0.5  # the response takes half a second
        turn.answered(Feedback.THROTTLED, retry_after=30.0)
    assert parts.politeness.ready_at(HOST) == parts.clock.now + 30.0
    assert parts.politeness.slot(HOST).backoff == 2.0
    assert [record.host for record in parts.hosts.take_dirty()] == [HOST]


async def test_a_turn_the_dispatcher_took_is_not_taken_again(parts: Parts) -> None:
    parts.politeness.start(HOST, parts.clock.now)  # one request at a time
    async with asyncio.timeout(1.0), parts.turns.take(HOST, taken=True) as turn:
        assert turn.waited == 0.0
        assert parts.politeness.slot(HOST).in_flight == 1
    assert parts.politeness.slot(HOST).in_flight == 0


async def test_a_visit_waits_for_its_hosts_turn_holding_no_place_to_fetch(parts: Parts) -> None:
    parts.owe_delay()
    waiting = asyncio.create_task(visit(parts))
    await parts.until(lambda: parts.admission.waiting[HOST] == 1)
    assert parts.admission.fetching == 0  # its place goes to another visit meanwhile
    assert parts.turns.waiting_ready(parts.clock.now) == 0
    parts.clock.now += DELAY
    assert parts.turns.waiting_ready(parts.clock.now) == 1  # it goes before new visits
    parts.turns.place_freed()
    turn = await waiting
    assert turn.waited == DELAY
    assert not parts.admission.waiting


async def test_a_visit_whose_turn_came_waits_for_a_place_to_fetch(parts: Parts) -> None:
    parts.owe_delay()
    waiting = asyncio.create_task(visit(parts))
    await parts.until(lambda: parts.admission.waiting[HOST] == 1)
    parts.admission.started()  # another visit takes the one place meanwhile
    parts.clock.now += DELAY
    parts.turns.place_freed()
    for _ in range(10):
        await asyncio.sleep(0)
    assert not waiting.done()
    assert parts.politeness.slot(HOST).in_flight == 0
    parts.admission.ended()  # the other visit ends
    parts.turns.place_freed()
    turn = await waiting
    assert turn.waited == DELAY


# -- cancellations and other exits: the invariants hold however the turn ends ----------


async def test_a_timeout_while_waiting_leaves_no_count_and_no_slot_taken(parts: Parts) -> None:
    parts.owe_delay()
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.01):
            await visit(parts)
    assert not parts.admission.waiting
    parts.clock.now += DELAY
    async with parts.turns.take(HOST) as turn:  # the host's slot is free
        assert turn.waited == 0.0


@pytest.mark.parametrize("iterations", range(3))
async def test_a_cancellation_as_the_turn_comes_is_not_lost(parts: Parts, iterations: int) -> None:
    """Cancelled while its turn comes, the visit ends cancelled wherever the loop is
    (Python 3.11's wait_for would return normally and the visit would take the turn)."""
    parts.owe_delay()
    waiting = asyncio.create_task(visit(parts, hold=asyncio.Event()))
    await parts.until(lambda: parts.admission.waiting[HOST] == 1)
    await asyncio.sleep(0)
    parts.clock.now += DELAY
    parts.turns.place_freed()
    for _ in range(iterations):
        await asyncio.sleep(0)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        async with asyncio.timeout(1.0):  # a lost cancellation holds the turn forever
            await waiting
    assert not parts.admission.waiting
    assert parts.politeness.slot(HOST).in_flight == 0


@pytest.mark.parametrize("answered", [False, True])
async def test_a_visit_cancelled_holding_its_turn_gives_the_slot_back(
    parts: Parts, answered: bool
) -> None:
    holding = asyncio.create_task(visit(parts, hold=asyncio.Event(), answered=answered))
    await parts.until(lambda: parts.politeness.slot(HOST).in_flight == 1)
    holding.cancel()
    with pytest.raises(asyncio.CancelledError):
        await holding
    assert parts.politeness.slot(HOST).in_flight == 0
    if answered:  # a request was made: the delay is owed
        assert parts.politeness.ready_at(HOST) == parts.clock.now + DELAY
    else:
        assert parts.politeness.ready(HOST, parts.clock.now)


async def test_any_base_exception_in_the_turn_gives_the_slot_back(parts: Parts) -> None:
    with pytest.raises(Shutdown):
        async with parts.turns.take(HOST):
            raise Shutdown
    assert parts.politeness.ready(HOST, parts.clock.now)


async def test_any_base_exception_while_waiting_leaves_no_count(parts: Parts) -> None:
    parts.owe_delay()
    waiting = asyncio.create_task(visit(parts))
    await parts.until(lambda: parts.admission.waiting[HOST] == 1)
    parts.clock.fail = Shutdown()  # raised where the woken visit reads the clock
    parts.turns.place_freed()
    with pytest.raises(Shutdown):
        await waiting
    assert not parts.admission.waiting
    assert parts.politeness.slot(HOST).in_flight == 0
