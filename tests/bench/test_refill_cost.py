"""The refill benchmark (`bench/refill_cost.py`) writes the queue it is asked for and
counts the rows its refills read. Nothing here is timed."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "refill_cost.py"


def refill(db: Path, *flags: str) -> str:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(db), "--runs", "1", *flags],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout


def test_it_writes_the_queue_and_reports_each_refill_and_the_rows_it_read(
    tmp_path: Path,
) -> None:
    db = tmp_path / "queue.db"
    out = refill(db, "--queue", "12000", "--hosts", "3", "--capacity", "2000")
    assert out.startswith("12000 URLs queued, 3 hosts")
    empty, half = re.findall(r"(\d+) loaded in .*?, (\d+) rows read", out)
    # memory fills within the first batch of 5,000 rows read: the queue is not read on
    assert empty == ("2000", "5000")
    assert half == ("1001", "5000")  # half of memory popped, and a bit more


def test_a_skewed_queue_gives_the_first_hosts_most_urls(tmp_path: Path) -> None:
    out = refill(tmp_path / "queue.db", "--queue", "3000", "--hosts", "50", "--skewed")
    assert out.startswith("3000 URLs queued, ")
    hosts = int(out.split(", ")[1].split()[0])
    assert 10 < hosts <= 50


def test_an_existing_file_is_not_overwritten(tmp_path: Path) -> None:
    db = tmp_path / "crawl.db"
    db.write_bytes(b"not a queue")
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(db), "--queue", "10"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "exists" in done.stderr
    assert db.read_bytes() == b"not a queue"
