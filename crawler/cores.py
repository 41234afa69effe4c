"""How a crawl's process shares the cores: NumPy's BLAS computes on the calling thread.

NumPy's OpenBLAS keeps a thread per core and hands each large vector operation to them
(a dot product over the scorer's 2**18 columns, as the norm of its expanded topic
takes); after one, those threads spin, waiting for the next, for a while. The crawl's
process makes such a call now and then, and each time a thread kept a core busy doing
nothing, a core the worker processes, the storage writer and the fetches needed: on the
10,000-page testbed 0.5 ms of CPU a page, a seventh of the crawl's process. Its vectors
are small enough for one thread; the other cores are the worker processes'.
"""

from __future__ import annotations

from threadpoolctl import threadpool_limits


def compute_on_the_calling_thread() -> None:
    """Limit the BLAS libraries loaded in this process to one thread each."""
    threadpool_limits(limits=1, user_api="blas")
