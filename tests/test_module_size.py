"""Each module of the crawler and its storage holds one purpose, read in one sitting: a
few hundred lines at most."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_LINES = 350


def test_no_module_of_the_crawler_or_its_storage_is_longer_than_350_lines() -> None:
    too_long = {}
    for package in ("crawler", "storage"):
        for path in sorted((ROOT / package).rglob("*.py")):
            name = path.relative_to(ROOT).as_posix()
            lines = len(path.read_text(encoding="utf-8").splitlines())
            if lines > MAX_LINES:
                too_long[name] = lines
    assert too_long == {}
