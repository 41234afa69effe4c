"""Loading the settings: defaults, then a TOML file, then CRAWLER_* variables, then flags.

A TOML file holds the settings as top-level keys, in a [crawl] table, or in tables named
by section ([politeness], [pool], ...): `delay = 2` under [politeness] is `--delay 2`.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, get_args, get_origin, get_type_hints

from crawler.config.declaring import SECTIONS
from crawler.config.settings import CrawlConfig, section_of, setting_names
from crawler.errors import ConfigError

ENV_PREFIX = "CRAWLER_"


def _convert(name: str, value: Any) -> Any:
    """Convert a TOML value or an environment string to the setting's type."""
    hint = get_type_hints(CrawlConfig)[name]
    kinds = [k for k in (get_args(hint) or (hint,)) if k is not type(None)]
    kind = tuple if get_origin(hint) is tuple else kinds[0]
    if value is None or (isinstance(value, str) and value == "" and type(None) in get_args(hint)):
        return None
    try:
        if kind is bool:
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text in ("1", "true", "yes", "on"):
                return True
            if text in ("0", "false", "no", "off"):
                return False
            raise ValueError(f"not a boolean: {value!r}")
        if kind is int:
            if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                raise ValueError(f"not a whole number: {value!r}")
            return int(value)
        if kind is float:
            if isinstance(value, bool):
                raise ValueError(f"not a number: {value!r}")
            return float(value)
        if kind is str:
            if not isinstance(value, str):
                raise ValueError(f"not a string: {value!r}")
            return value
        if kind is tuple:
            if isinstance(value, str):
                return tuple(v.strip() for v in value.split(",") if v.strip())
            if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
                raise ValueError(f"not a list of strings: {value!r}")
            return tuple(value)
    except (TypeError, ValueError) as error:
        raise ConfigError(f"setting {name!r}: {error}") from None
    raise ConfigError(f"setting {name!r} cannot be set this way")


def read_toml(path: Path) -> dict[str, Any]:
    """Settings from a TOML file: top-level keys, or a [crawl] table."""
    try:
        with path.open("rb") as handle:
            data = tomllib.load(handle)
    except OSError as error:
        raise ConfigError(f"cannot read config file {str(path)!r}: {error.strerror}") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"config file {str(path)!r} is not valid TOML: {error}") from None
    names = set(setting_names())
    values: dict[str, Any] = {}
    for key, value in data.items():
        name = key.replace("-", "_")
        if name in SECTIONS:  # a section's table, or [crawl] holding any setting
            if not isinstance(value, dict):
                raise ConfigError(f"config file {str(path)!r}: [{key}] must be a table")
            for inner, inner_value in value.items():
                inner_name = inner.replace("-", "_")
                if name != "crawl" and inner_name in names and section_of(inner_name) != name:
                    raise ConfigError(
                        f"config file {str(path)!r}: setting {inner_name!r} belongs in "
                        f"[{section_of(inner_name)}], not [{key}]"
                    )
                values[inner_name] = inner_value
        else:
            values[name] = value
    return values


def read_environment(environ: Mapping[str, str]) -> dict[str, Any]:
    names = set(setting_names())
    values = {}
    for key, value in environ.items():
        if key.startswith(ENV_PREFIX):
            name = key[len(ENV_PREFIX) :].lower()
            if name in names:
                values[name] = value
    return values


def build_config(
    *,
    file_values: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    flag_values: Mapping[str, Any] | None = None,
) -> CrawlConfig:
    """Merge the layers, later ones winning, and validate."""
    names = set(setting_names())
    merged: dict[str, Any] = {}
    for layer, origin in (
        (file_values or {}, "config file"),
        (read_environment(environ if environ is not None else os.environ), "environment"),
        (flag_values or {}, "flags"),
    ):
        for name, value in layer.items():
            if name not in names:
                raise ConfigError(f"unknown setting {name!r} in {origin}")
            merged[name] = _convert(name, value)
    try:
        return CrawlConfig(**merged)
    except TypeError as error:  # a value of the wrong type reached __post_init__
        raise ConfigError(str(error)) from None
