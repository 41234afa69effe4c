"""Each module of the policies holds one purpose, read in one sitting: a few hundred
lines at most."""

from __future__ import annotations

from pathlib import Path

POLICIES = Path(__file__).resolve().parent.parent.parent / "policies"
MAX_LINES = 350


def test_no_module_of_the_policies_is_longer_than_350_lines() -> None:
    too_long = {}
    for path in sorted(POLICIES.rglob("*.py")):
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_LINES:
            too_long[path.relative_to(POLICIES).as_posix()] = lines
    assert too_long == {}
