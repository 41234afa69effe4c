"""The benchmarks' reading of CPU time: a process's from /proc, each thread's time on a
core and waiting for one, the cores' work together."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

from run_queue import thread_times  # noqa: E402
from testbed_process import cpu_seconds  # noqa: E402


def test_a_process_cpu_time_counts_its_work_not_its_sleep() -> None:
    code = "import time\nt = time.process_time()\nwhile time.process_time() - t < {}: pass\n"
    busy = subprocess.Popen([sys.executable, "-c", code.format(0.6) + "time.sleep(30)"])
    idle = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        deadline = time.monotonic() + 20
        while cpu_seconds(busy.pid) < 0.6 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert 0.6 <= cpu_seconds(busy.pid) < 1.5  # its loop, its start, not its sleep
        assert cpu_seconds(idle.pid) < 0.5
    finally:
        for process in (busy, idle):
            process.kill()
            process.wait()


def test_the_cores_work_together_is_reported_against_one_process() -> None:
    run = subprocess.run(
        [sys.executable, str(BENCH / "parallel_speed.py"), "--rounds", "2", "--steps", "300000"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    result = json.loads(run.stdout)
    assert result["processes"] >= 1
    assert len(result["speedups"]) == 2
    assert 0 < result["speedup"] <= result["processes"] * 1.5
    assert result["alone_seconds"] > 0


def test_threads_waiting_for_a_core_are_counted_on_the_run_queue() -> None:
    """More spinning processes than cores: each runs part of the time and waits on the
    run queue the rest; a sleeping one neither runs nor waits."""
    cores = len(os.sched_getaffinity(0))
    code = "import time\nt = time.monotonic()\nwhile time.monotonic() - t < 1.5: pass\n"
    spinners = [subprocess.Popen([sys.executable, "-c", code]) for _ in range(2 * cores)]
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3)"])
    try:
        time.sleep(1.0)
        spinning = [thread_times(process.pid) for process in spinners]
        sleeping = thread_times(sleeper.pid)
    finally:
        for process in (*spinners, sleeper):
            process.kill()
            process.wait()
    cpu = sum(cpu for threads in spinning for _, cpu, _ in threads.values())
    waited = sum(waited for threads in spinning for _, _, waited in threads.values())
    assert all(len(threads) == 1 for threads in spinning)  # each its main thread
    # twice as many spinners as cores: about as long waiting as running, all told
    assert waited > 0.3 * cpu > 0
    [(name, sleeper_cpu, sleeper_waited)] = sleeping.values()
    assert name.endswith("(main)")
    assert sleeper_cpu < 0.3
    assert sleeper_waited < 0.3
