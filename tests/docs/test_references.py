"""The documentation's references hold: every relative link and its anchor resolve, every
file of the repository it names exists, and every command it shows is one the crawler or
the benchmarks have."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from bench.__main__ import BENCHMARKS
from crawler.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [
    ROOT / "README.md",
    *sorted((ROOT / "docs").glob("*.md")),
    ROOT / "bench" / "realweb" / "README.md",
]

LINK = re.compile(r"\]\(([^)\s]+)\)")
# a file of the repository, as the docs name them: not a path inside a commit
# (`git show 810f12e:bench/clairvoyant.py`), nor a part of a longer path
FILE = re.compile(
    r"(?<![\w/.:-])((?:bench|crawler|policies|storage|testbed|tests|docs)/[\w/*.-]*\.(?:py|md))"
)
BENCHMARK = re.compile(r"python -m bench ([a-z][a-z-]*)")
# a command in backticks or on an indented line, as the docs show them
COMMAND = re.compile(r"(?:^ {4,}|`)crawler ([a-z]+)(?: ([a-z]+))?", re.MULTILINE)


def anchors(path: Path) -> set[str]:
    """The anchors of a Markdown file's headings, made as GitHub makes them."""
    made: set[str] = set()
    for line in path.read_text().splitlines():
        if not line.startswith("#"):
            continue
        slug = re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
        unique, n = slug, 0
        while unique in made:
            n += 1
            unique = f"{slug}-{n}"
        made.add(unique)
    return made


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def broken_references(path: Path) -> list[str]:
    text = path.read_text()
    broken = []
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        name, _, anchor = target.partition("#")
        linked = (path.parent / name).resolve() if name else path
        if not linked.exists():
            broken.append(f"link {target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(f"link {target}: no such heading")
    for name in FILE.findall(text):
        if not any(ROOT.glob(name.partition("::")[0])):
            broken.append(f"file {name}: not in the repository")
    for name in BENCHMARK.findall(text):
        if name not in BENCHMARKS:
            broken.append(f"python -m bench {name}: no such benchmark")
    commands = subcommands(build_parser())
    for command, sub in COMMAND.findall(text):
        if command not in commands:
            broken.append(f"crawler {command}: no such command")
            continue
        subs = subcommands(commands[command])
        if subs and sub and sub not in subs:
            broken.append(f"crawler {command} {sub}: no such command")
    return broken


@pytest.mark.parametrize("path", DOCUMENTS, ids=[str(path.relative_to(ROOT)) for path in DOCUMENTS])
def test_every_reference_of_a_document_resolves(path: Path) -> None:
    assert broken_references(path) == []


def test_the_checks_find_what_is_broken(tmp_path: Path) -> None:
    linked = tmp_path / "linked.md"
    linked.write_text("# Where it stands\n\n## `regex`, host by host\n")
    page = tmp_path / "page.md"
    page.write_text(
        "[a](linked.md#where-it-stands) [b](linked.md#regex-host-by-host)\n"
        "[c](linked.md#gone) [d](missing.md) [e](#here)\n\n## Here\n\n"
        "`bench/harness.py`, `bench/clairvoyant.py`, `git show 810f12e:bench/clairvoyant.py`\n"
        "`python -m bench focus`, `python -m bench ablations`\n\n"
        "    crawler experiment traversals --graph testbed\n"
        "    crawler experiment live --ground-truth DIR\n"
        "`crawler run`, `crawler crawl`\n"
    )
    assert broken_references(page) == [
        "link linked.md#gone: no such heading",
        "link missing.md: no such file",
        "file bench/clairvoyant.py: not in the repository",
        "python -m bench ablations: no such benchmark",
        "crawler experiment live: no such command",
        "crawler crawl: no such command",
    ]
