"""A wait for an event ends on a cancellation, however the two coincide."""

from __future__ import annotations

import asyncio

from crawler.waiting import wait_event


async def test_a_cancellation_as_the_event_is_set_ends_the_waiting_loop() -> None:
    # the dispatcher's shape: wait, look around, wait again until stopped
    event = asyncio.Event()
    rounds = 0

    async def loop() -> None:
        nonlocal rounds
        while rounds < 3:
            event.clear()
            await wait_event(event, 1.0)
            rounds += 1

    task = asyncio.create_task(loop())
    await asyncio.sleep(0.01)
    event.set()
    task.cancel()  # in the same loop iteration as the wake-up
    done, _ = await asyncio.wait([task], timeout=5)
    assert done == {task}
    assert task.cancelled()
    assert rounds == 0


async def test_it_tells_a_set_event_from_a_timeout() -> None:
    event = asyncio.Event()
    assert await wait_event(event, 0.01) is False
    event.set()
    assert await wait_event(event, 1.0) is True
