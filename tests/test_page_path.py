"""One page's path, as docs/architecture.md tells it, reads by stage: each step names the
modules it runs in, each exists, and the path changes package at most eight times
(engine -> fetch -> settle -> process -> store -> frontier -> engine is six)."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ARCHITECTURE = ROOT / "docs" / "architecture.md"
SECTION = "## One page's path"
STEP = re.compile(r"^\d+\. \*\*", re.MULTILINE)
MODULE = re.compile(r"`(crawler/[\w/]+\.py)`")
MAX_CHANGES = 8


def steps() -> list[str]:
    """The text of each numbered step of the page's path."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    assert SECTION in text, f"docs/architecture.md has no section {SECTION!r}"
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    starts = [match.start() for match in STEP.finditer(section)]
    return [section[start:end] for start, end in zip(starts, [*starts[1:], None], strict=True)]


def path_modules() -> list[str]:
    return [module for step in steps() for module in MODULE.findall(step)]


def test_each_step_names_the_modules_it_runs_in() -> None:
    found = steps()
    assert len(found) >= 6
    assert [step.splitlines()[0] for step in found if not MODULE.search(step)] == []


def test_each_module_of_the_path_exists() -> None:
    assert [module for module in path_modules() if not (ROOT / module).is_file()] == []


def test_the_path_changes_package_at_most_eight_times() -> None:
    packages = [Path(module).parent.as_posix() for module in path_modules()]
    visited = [package for package, _ in itertools.groupby(packages)]
    assert len(visited) - 1 <= MAX_CHANGES, " -> ".join(visited)
