"""The settings' sections as types: each holds its section's settings, from the config
it is built from, frozen, built once, checked when built."""

from __future__ import annotations

import dataclasses

import pytest

from crawler.config import SECTIONS, ConfigError, CrawlConfig, build_config, section_of, sections

# the config's attribute for each section: warc is the WARC directory's setting
ATTRIBUTES = {name: name for name in SECTIONS} | {"warc": "warc_files"}


def test_each_section_holds_the_settings_declared_in_it_with_the_configs_values() -> None:
    config = build_config(
        flag_values={"delay": 2.5, "buffer": 8, "revisit": "whittle", "warc_prefix": "w"},
        environ={},
    )
    for name in SECTIONS:
        section = getattr(config, ATTRIBUTES[name])
        assert type(section) is sections.TYPES[name]
        declared = [s.name for s in dataclasses.fields(CrawlConfig) if section_of(s.name) == name]
        assert [f.name for f in dataclasses.fields(section)] == declared
        for setting in declared:
            assert getattr(section, setting) == getattr(config, setting)
    assert (config.politeness.delay, config.limits.buffer) == (2.5, 8)
    assert config.revisits.enabled
    assert config.warc_files.warc_prefix == "w"


def test_a_section_is_frozen_and_built_once_per_config() -> None:
    config = CrawlConfig(delay=3.0)
    assert config.politeness is config.politeness
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.politeness.delay = 0.0  # type: ignore[misc]
    assert CrawlConfig(delay=4.0).politeness.delay == 4.0


def test_a_section_built_with_a_bad_value_names_the_setting() -> None:
    good = CrawlConfig().politeness
    with pytest.raises(ConfigError, match="'max_retries' must not be negative"):
        dataclasses.replace(good, max_retries=-1)
    with pytest.raises(ConfigError, match="'revisit' must be one of"):
        dataclasses.replace(CrawlConfig().revisits, revisit="sometimes")


def test_the_api_token_stays_out_of_its_sections_repr() -> None:
    token = "s3cret-token-0123456789"
    assert token not in repr(CrawlConfig(api_token=token).api)


def test_processors_are_checked_against_the_limits_buffer() -> None:
    with pytest.raises(ConfigError, match=r"'processors' must be between 1 and buffer \(4\)"):
        CrawlConfig(buffer=4, processors=5)
    assert CrawlConfig(buffer=4, processors=4).pool.processors == 4
