"""How a crawl's process manages its memory: large blocks go back to the system when
freed, and cycles of garbage are looked for in bulk.

glibc's malloc serves a block of 128 KiB or more with a mapping of its own, unmapped
when freed; but each time such a block is freed it raises that threshold to the block's
size (up to 32 MiB), and from then on blocks below it come from the heap, whose freed
memory mostly stays with the process. A crawl meets a few pages of megabytes among
thousands of a few kilobytes: after one, every large page's body and parse tree would
stay resident, in the crawl's process and in each worker. Fixing the threshold at
glibc's starting value keeps the first behaviour (measured: fifty 900 KB blocks freed
after a 4 MB one left 43 MB resident, with the threshold fixed 1 MB).

Python's cyclic garbage collector looks through its youngest objects each time 700
more have been made than freed, and through every object after a hundred such looks
once the oldest have grown by a quarter. A crawl holds hundreds of thousands of objects
(its frontier's queue, its caches) and makes many at a time that live a while (a
refill's batch of URLs read back, a host's queue re-ranked), so those looks and passes
come often: a Q-learning refill of 10,000 URLs from 63,268 queued spent a third of its
CPU in the collector, and a Q-learning crawl of 50,000 testbed pages about 8 s. Looking
each 10,000 young objects instead (`YOUNG_OBJECTS`), cycles of garbage are still found,
by the same rules, a few thousand objects later.
"""

from __future__ import annotations

import ctypes
import gc
import sys

M_MMAP_THRESHOLD = -3  # mallopt's parameter number (glibc's malloc.h)
MMAP_THRESHOLD = 128 * 1024  # glibc's own starting threshold


def return_large_blocks() -> bool:
    """Fix the C allocator's mmap threshold in this process; False where it is not
    glibc's (or mallopt refuses)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the process's own C library
    except (OSError, AttributeError):
        return False
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD))


YOUNG_OBJECTS = 10_000  # objects made and not freed between looks for cycles (Python's: 700)


def collect_cycles_in_bulk() -> None:
    """Let the cyclic garbage collector look at young objects only every
    `YOUNG_OBJECTS`, in this process (its older generations' rules as they are)."""
    young, middle, old = gc.get_threshold()
    gc.set_threshold(max(YOUNG_OBJECTS, young), middle, old)
