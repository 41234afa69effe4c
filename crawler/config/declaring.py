"""How a setting is declared (`setting`) and how a config gives its sections
(`Section`): each section's type built from the config's values once, and shared by
the configs equal to it."""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Generic, TypeVar, overload

from crawler.config import sections

SECTIONS = tuple(sections.TYPES)

S = TypeVar("S")


def setting(
    default: Any,
    section: str,
    help: str,
    *,
    flag: bool = True,
    metavar: str | None = None,
    flag_name: str | None = None,
    secret: bool = False,
) -> Any:
    """A setting's declaration: its default, its section, its help; `flag`: whether
    `crawler run` has a flag for it (seeds and topics have flags of their own);
    `flag_name`: the flag's name, when not the setting's (a list's item: `--include-url`);
    `secret`: kept out of the settings' repr, which logs and errors may show."""
    assert section in SECTIONS, section
    metadata = {
        "section": section,
        "help": help,
        "flag": flag,
        "metavar": metavar,
        "flag_name": flag_name,
    }
    return dataclasses.field(default=default, metadata=metadata, repr=not secret)


class Section(Generic[S]):
    """A config's attribute that is one of its sections."""

    def __init__(self, kind: type[S]) -> None:
        self.kind = kind

    @overload
    def __get__(self, config: None, owner: type) -> Section[S]: ...
    @overload
    def __get__(self, config: object, owner: type) -> S: ...
    def __get__(self, config: object | None, owner: type) -> S | Section[S]:
        if config is None:
            return self
        section: S = sections_of(config)[self.kind]
        return section


def sections_of(config: object) -> dict[type, Any]:
    """Every section of `config`, by type, each built (and so checked) from its values:
    once for a config whose values can be hashed, as each declared one can."""
    try:
        hash(config)
    except TypeError:  # a list given where a tuple is declared
        return _build(config)
    return _built(config)


@functools.lru_cache(maxsize=64)
def _built(config: object) -> dict[type, Any]:
    return _build(config)


def _build(config: object) -> dict[type, Any]:
    return {
        kind: kind(
            **{field.name: getattr(config, field.name) for field in dataclasses.fields(kind)}
        )
        for kind in sections.TYPES.values()
    }
