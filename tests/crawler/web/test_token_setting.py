"""The API's token: given by flag, environment or settings file, checked at start, and
kept out of what the crawl writes down or shows."""

from __future__ import annotations

import pytest

from crawler.cli import build_parser
from crawler.config import ConfigError, build_config
from crawler.startup import warcinfo

TOKEN = "0123456789abcdef0123"


def test_the_token_comes_from_the_environment_or_a_flag() -> None:
    assert build_config(environ={"CRAWLER_API_TOKEN": TOKEN}).api_token == TOKEN
    args = build_parser().parse_args(["run", "--api-token", TOKEN])
    assert args.api_token == TOKEN
    assert build_config(environ={}).api_token is None


@pytest.mark.parametrize("token", ["short", "has a space in it here", "x" * 15, "é" * 20])
def test_a_weak_or_unsendable_token_is_refused_at_start(token: str) -> None:
    with pytest.raises(ConfigError, match="'api_token' must be at least 16 characters"):
        build_config(environ={"CRAWLER_API_TOKEN": token})


def test_the_token_is_in_neither_the_settings_repr_nor_the_warc_files() -> None:
    config = build_config(environ={"CRAWLER_API_TOKEN": TOKEN, "CRAWLER_WARC": "w"})
    assert TOKEN not in repr(config)
    assert TOKEN not in str(warcinfo(config))
