"""Large blocks go back to the system when freed, and cycles of garbage are looked for in
bulk (crawler.memory), each measured in a process of its own: the allocator's and the
collector's settings are the process's."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from crawler.memory import YOUNG_OBJECTS

FREE_BLOCKS = textwrap.dedent(
    """
    import sys
    from crawler.memory import return_large_blocks

    def resident_mb():
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * 4096 / 2**20

    fixed = return_large_blocks() if sys.argv[1] == "fixed" else False
    page = b"x" * 4_000_000  # a big page, freed: glibc raises its threshold past it
    del page
    before = resident_mb()
    pages = [b"x" * 900_000 for _ in range(50)]
    last = pages.pop()  # the newest stays: the heap cannot shrink below it
    del pages
    print(fixed, resident_mb() - before)
    """
)


def kept_after_freeing(mode: str) -> tuple[bool, float]:
    done = subprocess.run(
        [sys.executable, "-c", FREE_BLOCKS, mode], capture_output=True, text=True, check=True
    )
    fixed, kept = done.stdout.split()
    return fixed == "True", float(kept)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's allocator")
def test_blocks_freed_after_a_big_page_leave_the_process() -> None:
    fixed, kept = kept_after_freeing("fixed")
    assert fixed
    assert kept < 5  # MB: the last block alone stays (0.9)
    # without it, glibc keeps most of the 44 MB freed: what the setting is for
    assert kept_after_freeing("default") == (False, pytest.approx(44, abs=12))


FIND_A_CYCLE = textwrap.dedent(
    """
    import gc, sys, weakref
    from crawler.memory import YOUNG_OBJECTS, collect_cycles_in_bulk

    before = gc.get_threshold()
    if sys.argv[1] == "bulk":
        collect_cycles_in_bulk()
    gc.collect()  # the young generation empty

    class Node:
        pass

    node = Node()
    node.itself = node  # a cycle: only the collector frees it
    gone = weakref.ref(node)
    del node
    made = [[] for _ in range(YOUNG_OBJECTS // 2)]
    halfway = gone() is None
    made += [[] for _ in range(YOUNG_OBJECTS)]
    print(*before, *gc.get_threshold(), halfway, gone() is None)
    """
)


def cycle_found(mode: str) -> tuple[list[int], list[int], bool, bool]:
    """The collector's thresholds before and after, and whether a cycle of garbage was
    freed after half `YOUNG_OBJECTS` more objects, and after one and a half."""
    done = subprocess.run(
        [sys.executable, "-c", FIND_A_CYCLE, mode], capture_output=True, text=True, check=True
    )
    *numbers, halfway, at_last = done.stdout.split()
    thresholds = [int(number) for number in numbers]
    return thresholds[:3], thresholds[3:], halfway == "True", at_last == "True"


def test_cycles_of_garbage_are_found_in_bulk_and_still_found() -> None:
    before, after, halfway, at_last = cycle_found("bulk")
    assert after == [YOUNG_OBJECTS, *before[1:]]  # the older generations' rules kept
    assert not halfway  # no look through the young objects each 700
    assert at_last  # but after YOUNG_OBJECTS, as Python's own looks do after 700
    assert cycle_found("default")[2:] == (True, True)
