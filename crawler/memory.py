"""Large blocks of memory go back to the system when freed.

glibc's malloc serves a block of 128 KiB or more with a mapping of its own, unmapped
when freed; but each time such a block is freed it raises that threshold to the block's
size (up to 32 MiB), and from then on blocks below it come from the heap, whose freed
memory mostly stays with the process. A crawl meets a few pages of megabytes among
thousands of a few kilobytes: after one, every large page's body and parse tree would
stay resident, in the crawl's process and in each worker. Fixing the threshold at
glibc's starting value keeps the first behaviour (measured: fifty 900 KB blocks freed
after a 4 MB one left 43 MB resident, with the threshold fixed 1 MB).
"""

from __future__ import annotations

import ctypes
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
