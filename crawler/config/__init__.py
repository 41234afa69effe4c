"""A crawl's settings: declared in sections (`settings`, `declaring`), their defaults
once (`defaults`), each section a validated type of its own (`sections`), loaded from a
TOML file, the environment and flags (`loading`), and the flags and reference made from
the declarations (`reference`)."""

from crawler.config.declaring import SECTIONS
from crawler.config.loading import build_config, read_environment, read_toml
from crawler.config.sections import REVISIT_POLICIES
from crawler.config.settings import CrawlConfig, section_of, setting_names
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
