"""NumPy's BLAS computes on the calling thread in a crawl's process (crawler.cores): its
threads no longer spin on the cores after a large vector operation. Measured in a process
of its own: the BLAS library's threads are the process's."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from tests.crawler.helpers import crawl, html, links, serving, site

SPIN = textwrap.dedent(
    """
    import os, sys, time
    import numpy as np
    from crawler.cores import compute_on_the_calling_thread

    def other_threads_cpu():
        seconds = 0.0
        for tid in os.listdir("/proc/self/task"):
            if int(tid) != os.getpid():
                with open(f"/proc/self/task/{tid}/stat") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
                seconds += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        return seconds

    if sys.argv[1] == "limited":
        compute_on_the_calling_thread()
    topic = np.random.default_rng(0).random(2**18)  # the scorer's columns
    before = other_threads_cpu()
    for _ in range(200):  # a norm now and then, as the scorer refreshes its topic
        np.linalg.norm(topic)
        time.sleep(0.002)
    print(other_threads_cpu() - before)
    """
)


def spinning_seconds(mode: str) -> float:
    done = subprocess.run(
        [sys.executable, "-c", SPIN, mode], capture_output=True, text=True, check=True
    )
    return float(done.stdout)


def blas_threads() -> list[int]:
    return [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]


@pytest.mark.skipif(max(blas_threads(), default=1) < 2, reason="BLAS has one thread here")
def test_blas_threads_no_longer_spin_on_the_cores() -> None:
    spinning = spinning_seconds("default")
    assert spinning > 0.1  # OpenBLAS's threads spun between the norms
    assert spinning_seconds("limited") < spinning / 4


async def test_a_crawl_limits_blas_to_the_calling_thread(db_url: str) -> None:
    with threadpool_limits(limits=2, user_api="blas"):
        assert 2 in blas_threads()
        async with serving(site({"/": html(links())})) as base:
            await crawl(db_url, [base])
        assert set(blas_threads()) == {1}
