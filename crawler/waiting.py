"""Waiting for an event, at most so long, without losing a cancellation.

Python 3.11's `asyncio.wait_for` returns normally when the task is cancelled in the same
loop iteration as the awaited event is set: the cancellation is lost, and a loop that
waits this way (the dispatcher, a visit waiting for its host's turn) never stops. A
timeout scope does not lose it, and makes no task of each wait.
"""

from __future__ import annotations

import asyncio


async def wait_event(event: asyncio.Event, seconds: float | None) -> bool:
    """Wait until `event` is set or `seconds` pass (None: for as long as it takes);
    whether it was set."""
    try:
        async with asyncio.timeout(seconds):
            await event.wait()
    except TimeoutError:
        return False
    return True
