"""What is made from the settings' declarations: the flags of `crawler run` (one argument
group per section) and the settings reference in docs/configuration.md, which a test
keeps equal to `settings_table()`."""

from __future__ import annotations

import argparse
import dataclasses
import typing
from typing import Any, get_args, get_origin

from crawler.config.declaring import SECTIONS
from crawler.config.settings import CrawlConfig

TABLE_START = "<!-- settings table: made by `python -m crawler.config.reference` -->"
TABLE_END = "<!-- end of the settings table -->"


def _declarations() -> list[dataclasses.Field[Any]]:
    return list(dataclasses.fields(CrawlConfig))


def _kind(field: dataclasses.Field[Any]) -> type:
    hint = typing.get_type_hints(CrawlConfig)[field.name]
    if get_origin(hint) is tuple:
        return tuple
    kinds = [k for k in (get_args(hint) or (hint,)) if k is not type(None)]
    return kinds[0]  # type: ignore[no-any-return]


def add_setting_flags(parser: argparse.ArgumentParser) -> None:
    """A flag for every setting that has one, grouped by section; each flag's value is
    passed on only when given."""
    groups = {section: parser.add_argument_group(f"{section} settings") for section in SECTIONS}
    for field in _declarations():
        meta = field.metadata
        if not meta["flag"]:
            continue
        options: dict[str, Any] = {"dest": field.name, "help": _help(field)}
        kind = _kind(field)
        if kind is tuple:
            options["action"] = "append"
        elif kind in (int, float):
            options["type"] = kind
        if meta["metavar"]:
            options["metavar"] = meta["metavar"]
        groups[meta["section"]].add_argument(_flag(field), **options)


def _flag(field: dataclasses.Field[Any]) -> str:
    return "--" + (field.metadata["flag_name"] or field.name.replace("_", "-"))


def flag_names() -> list[str]:
    return [field.name for field in _declarations() if field.metadata["flag"]]


def _help(field: dataclasses.Field[Any]) -> str:
    default = field.default
    if default is None or default == () or isinstance(default, bool):
        return str(field.metadata["help"])
    return f"{field.metadata['help']} (default {default})"


def settings_table() -> str:
    """The reference table of every setting, by section, in Markdown."""
    lines = [
        TABLE_START,
        "",
        "| section | setting (TOML key, `CRAWLER_` variable) | flag | default | meaning |",
        "| --- | --- | --- | --- | --- |",
    ]
    for section in SECTIONS:
        for field in _declarations():
            if field.metadata["section"] != section:
                continue
            flag = _flag(field) if field.metadata["flag"] else ""
            default = "" if field.default is None or field.default == () else field.default
            lines.append(
                f"| {section} | `{field.name}` | {f'`{flag}`' if flag else ''} | "
                f"{f'`{default}`' if default != '' else ''} | {field.metadata['help']} |"
            )
    return "\n".join([*lines, "", TABLE_END])


if __name__ == "__main__":
    print(settings_table())
