"""A crawl's settings: declared in sections (`settings`), their defaults once
(`defaults`), loaded from a TOML file, the environment and flags (`loading`), and the
flags and reference made from the declarations (`reference`)."""

from crawler.config.loading import build_config, read_environment, read_toml
from crawler.config.settings import (
    REVISIT_POLICIES,
    SECTIONS,
    CrawlConfig,
    section_of,
    setting_names,
)
from crawler.errors import ConfigError

__all__ = [
    "REVISIT_POLICIES",
    "SECTIONS",
    "ConfigError",
    "CrawlConfig",
    "build_config",
    "read_environment",
    "read_toml",
    "section_of",
    "setting_names",
]
