"""The refill timeline (`bench/refill_timeline.py`) sees a small frontier's refills and
counts the fetches around them. Nothing here is timed."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "refill_timeline.py"


def test_a_small_frontier_memory_is_refilled_and_the_fetches_around_it_counted() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--pages", "3000", "--frontier-memory", "200"],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    refills = re.findall(r"refill at (\d+) pages: (\d+) URLs loaded", done.stdout)
    assert len(refills) >= 3
    assert all(1 <= int(loaded) <= 200 for _, loaded in refills)  # never beyond memory
    assert [int(pages) for pages, _ in refills] == sorted(int(pages) for pages, _ in refills)
    # refills of 200 URLs come faster than every 2 seconds: some windows hold no sample
    for name in ("before refills", "after the first refill"):
        assert re.search(rf"^{name}: \d+ pages a second; fetches ok \d+%", done.stdout, re.M)
    assert re.search(r"^after refills: (none|\d+ pages a second; fetches ok)", done.stdout, re.M)
