"""A topic-focused web crawler: give it seed URLs and a topic, and it fetches politely,
scores every page against the topic and keeps what it finds.

As a library (docs/python-api.md): `crawl`, `crawl_blocking`, `stream_pages`,
`read_pages`. They load with their first use, so that importing one of the crawler's
modules does not load the whole crawler."""

import importlib
from typing import Any

__version__ = "0.1.0"

__all__ = [
    "ConfigError",
    "CrawlSummary",
    "Page",
    "__version__",
    "crawl",
    "crawl_blocking",
    "read_pages",
    "stream_pages",
]


def __getattr__(name: str) -> Any:
    if name == "ConfigError":
        from crawler.errors import ConfigError

        return ConfigError
    if name in __all__:
        # by name: every module of the crawler imports this package (for its version),
        # and the API above them all is none of their dependencies
        return getattr(importlib.import_module("crawler.api"), name)
    raise AttributeError(f"module 'crawler' has no attribute {name!r}")
