"""Every command and option says what it is for."""

from __future__ import annotations

import argparse

from crawler.cli import build_parser


def _parsers(
    parser: argparse.ArgumentParser, name: str = "crawler"
) -> list[tuple[str, argparse.ArgumentParser]]:
    found = [(name, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command, sub in action.choices.items():
                found += _parsers(sub, f"{name} {command}")
    return found


def test_every_option_of_every_command_has_a_help_text() -> None:
    missing = [
        f"{name} {action.option_strings[-1]}"
        for name, parser in _parsers(build_parser())
        for action in parser._actions
        if action.option_strings and not action.help
    ]
    assert missing == []


def test_every_command_has_a_help_text() -> None:
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {choice.dest: choice.help for choice in commands._choices_actions}
    assert set(helps) == set(commands.choices)
    assert all(helps.values())


def test_the_main_help_opens_with_what_the_tool_does_for_a_user() -> None:
    text = build_parser().format_help()
    opening = text.split("\n\n")[1]
    assert opening.startswith("Crawl the web towards a topic")
    for note_for_developers in ("module", "import", "parser is built", "groups load"):
        assert note_for_developers not in text
