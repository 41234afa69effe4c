"""The benchmarks' reading of CPU time: a process's from /proc."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

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
