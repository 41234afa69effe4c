"""The walkthrough and the troubleshooting page: linked from the README, and every
`crawler` command they show is one the command line takes."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from crawler.cli import build_parser

ROOT = Path(__file__).parents[2]
GUIDES = ("docs/walkthrough.md", "docs/troubleshooting.md")


def _commands(text: str) -> list[str]:
    """Each `crawler ...` command in the page's code blocks, continuation lines joined."""
    blocks = re.findall(r"^```(?:sh|console|bash)?\n(.*?)^```", text, flags=re.M | re.S)
    blocks += re.findall(r"(?:^    .*\n)+", text, flags=re.M)  # indented blocks
    commands = []
    for block in blocks:
        joined = re.sub(r"\\\n\s*", " ", block)
        for line in joined.splitlines():
            line = line.strip().removeprefix("$ ")
            if line.startswith("crawler "):
                commands.append(line.split(" #")[0].split(" |")[0].split(" &")[0].strip())
    return commands


@pytest.mark.parametrize("guide", GUIDES)
def test_the_guide_is_linked_from_the_readme(guide: str) -> None:
    assert f"]({guide})" in (ROOT / "README.md").read_text()


@pytest.mark.parametrize("guide", GUIDES)
def test_every_command_the_guide_shows_is_one_the_crawler_takes(guide: str) -> None:
    commands = _commands((ROOT / guide).read_text())
    assert len(commands) >= 4
    parser = build_parser()
    for command in commands:
        try:
            parser.parse_args(shlex.split(command)[1:])
        except SystemExit as error:  # argparse's way of refusing
            pytest.fail(f"{guide}: {command!r} is refused ({error})")
