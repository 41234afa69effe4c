from __future__ import annotations

from pathlib import Path

import pytest

from crawler.config import ConfigError, CrawlConfig, build_config, read_toml, setting_names


def test_layers_apply_in_order_file_then_environment_then_flags(tmp_path: Path) -> None:
    path = tmp_path / "crawl.toml"
    path.write_text(
        '[crawl]\nseeds = ["http://a.example/"]\ntopic = "solar"\ndelay = 2.0\n'
        "concurrency = 4\nmax-pages = 10\n"
    )
    config = build_config(
        file_values=read_toml(path),
        environ={"CRAWLER_DELAY": "3.5", "CRAWLER_CONCURRENCY": "8", "HOME": "/root"},
        flag_values={"concurrency": 2},
    )
    assert config.seeds == ("http://a.example/",)
    assert (config.delay, config.concurrency, config.max_pages) == (3.5, 2, 10)


def test_environment_lists_and_booleans() -> None:
    config = build_config(
        environ={"CRAWLER_ALLOWED_DOMAINS": "a.com, b.org", "CRAWLER_STORE_TEXT": "no"}
    )
    assert config.allowed_domains == ("a.com", "b.org")
    assert config.store_text is False


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"concurrency": 0}, "'concurrency' must be greater than 0"),
        ({"delay": -1}, "'delay' must not be negative"),
        ({"relevance_threshold": 1.5}, "'relevance_threshold' must be between 0 and 1"),
        ({"topic_feedback": -0.5}, "'topic_feedback' must not be negative"),
        ({"topic_feedback": float("nan")}, "'topic_feedback' must be finite"),
        ({"metrics_port": 70000}, "'metrics_port' must be a port"),
        ({"delay": float("inf")}, "'delay' must be finite"),
        ({"user_agent": " "}, "'user_agent' must start with a product token"),
        ({"user_agent": "2.0 (+https://example.org)"}, "'user_agent' must start with a product"),
        ({"warc_max_size": 0}, "'warc_max_size' must be greater than 0"),
        ({"warc_prefix": "../up"}, "'warc_prefix' must be letters, digits"),
        ({"warc": " "}, "'warc' must name a directory"),
        ({"inline_below": -1}, "'inline_below' must be 0 or more bytes"),
        ({"db_outage_seconds": 0}, "'db_outage_seconds' must be greater than 0"),
        ({"db_outage_seconds": float("inf")}, "'db_outage_seconds' must be finite"),
    ],
)
def test_a_bad_value_names_the_setting(values: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        build_config(flag_values=values, environ={})


def test_wrong_types_and_unknown_settings_are_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="setting 'concurrency': not a whole number"):
        build_config(file_values={"concurrency": 2.5}, environ={})
    with pytest.raises(ConfigError, match="setting 'max_pages'"):
        build_config(environ={"CRAWLER_MAX_PAGES": "lots"})
    with pytest.raises(ConfigError, match="unknown setting 'delai' in config file"):
        build_config(file_values={"delai": 1}, environ={})


def test_unreadable_and_invalid_config_files_are_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read config file"):
        read_toml(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("delay = = 1")
    with pytest.raises(ConfigError, match="is not valid TOML"):
        read_toml(bad)


def test_run_needs_seeds_and_a_topic() -> None:
    with pytest.raises(ConfigError, match="'seeds' give at least one seed"):
        CrawlConfig(topic="x").check_runnable()
    with pytest.raises(ConfigError, match="'topic' give a topic"):
        CrawlConfig(seeds=("http://a/",), topic="  ").check_runnable()


def test_the_shipped_daemon_config_is_valid() -> None:
    path = Path(__file__).resolve().parents[2] / "deploy" / "crawl.toml"
    config = build_config(file_values=read_toml(path), environ={})
    config.check_runnable()
    assert config.metrics_host == "0.0.0.0"
    assert config.db.endswith("/data/crawl.db")


def test_the_settings_reference_is_made_from_the_declarations() -> None:
    from crawler.config.reference import TABLE_END, TABLE_START, settings_table

    text = (Path(__file__).parents[2] / "docs" / "configuration.md").read_text()
    start, end = text.index(TABLE_START), text.index(TABLE_END) + len(TABLE_END)
    assert text[start:end] == settings_table()  # python -m crawler.config.reference
    for name in setting_names():
        assert f"`{name}`" in settings_table()


def test_every_setting_with_a_flag_is_a_flag_of_run() -> None:
    from crawler.cli import build_parser
    from crawler.config.reference import flag_names

    args = build_parser().parse_args(
        ["run", "--delay", "2.5", "--max-pages", "7", "--source-half-lives", "http://a/=60"]
    )
    assert (args.delay, args.max_pages, args.source_half_lives) == (2.5, 7, ["http://a/=60"])
    for name in flag_names():
        assert hasattr(args, name)
    assert set(flag_names()) < set(setting_names())


def test_a_toml_file_may_group_settings_by_section(tmp_path: Path) -> None:
    path = tmp_path / "crawl.toml"
    path.write_text(
        'topic = "x"\n[politeness]\ndelay = 2.5\nmax-retries = 1\n[pool]\nfetchers = "mm1k"\n'
    )
    config = build_config(file_values=read_toml(path), environ={})
    assert (config.topic, config.delay, config.max_retries, config.fetchers) == (
        "x",
        2.5,
        1,
        "mm1k",
    )
    path.write_text("[pool]\ndelay = 2.5\n")
    with pytest.raises(ConfigError, match=r"'delay' belongs in \[politeness\], not \[pool\]"):
        read_toml(path)
