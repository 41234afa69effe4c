"""The checks of a crawl's settings, each failure a message naming the setting."""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

from crawler.config import defaults
from crawler.errors import ConfigError
from crawler.languages import LANGUAGES
from crawler.net.robots import PRODUCT_TOKEN
from crawler.net.url_filters import pattern_error
from crawler.net.urls import parameter_error
from policies.registry import names

if TYPE_CHECKING:
    from crawler.config.settings import CrawlConfig

FULL_QUEUE_POLICIES = ("block", "drop")  # a page meeting a full processor queue: wait, or drop
LOG_FORMATS = ("text", "json")
REVISIT_POLICIES = (*names("revisit"), "off")  # off: no re-visits
_WARC_PREFIX = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_DAEMON_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_API_TOKEN = re.compile(r"[\x21-\x7e]{16,}")  # printable ASCII, no space: a header's value


def check(config: CrawlConfig) -> None:
    positive = (
        "concurrency",
        "per_host_concurrency",
        "connect_timeout",
        "total_timeout",
        "max_body_bytes",
        "robots_ttl",
        "robots_retry",
        "progress_interval",
        "max_backoff",
        "revisit_period",
        "revisit_budget",
        "interest_half_life",
        "source_min_links",
        "max_sources",
        "warc_max_size",
        "host_memory",
        "lease_seconds",
        "db_outage_seconds",
        "sitemap_max_urls",
    )
    for name in positive:
        require(getattr(config, name) > 0, name, "must be greater than 0")
    for name in ("delay", "max_redirects", "max_retries"):
        require(getattr(config, name) >= 0, name, "must not be negative")
    for name in ("max_pages", "duration", "max_depth"):
        value = getattr(config, name)
        require(value is None or value >= 0, name, "must not be negative")
    require(
        0.0 <= config.relevance_threshold <= 1.0, "relevance_threshold", "must be between 0 and 1"
    )
    require(math.isfinite(config.topic_feedback), "topic_feedback", "must be finite")
    require(config.topic_feedback >= 0, "topic_feedback", "must not be negative")
    require(
        config.patience is None or 0.0 <= config.patience <= 1.0,
        "patience",
        "must be between 0 and 1",
    )
    require(config.buffer >= 2, "buffer", "must hold at least 2 pages")
    require(
        config.processors is None or 1 <= config.processors <= config.buffer,
        "processors",
        f"must be between 1 and buffer ({config.buffer}): each works on a page of the queue",
    )
    require(config.inline_below >= 0, "inline_below", "must be 0 or more bytes")
    require(
        config.full_queue in FULL_QUEUE_POLICIES,
        "full_queue",
        f"must be one of {', '.join(FULL_QUEUE_POLICIES)} (got {config.full_queue!r})",
    )
    require(
        config.log_format in LOG_FORMATS,
        "log_format",
        f"must be one of {', '.join(LOG_FORMATS)} (got {config.log_format!r})",
    )
    require(config.warc is None or bool(config.warc.strip()), "warc", "must name a directory")
    require(
        _WARC_PREFIX.fullmatch(config.warc_prefix) is not None,
        "warc_prefix",
        "must be letters, digits, '.', '_' or '-', starting with a letter or digit",
    )
    require(
        config.daemon_id is None or _DAEMON_ID.fullmatch(config.daemon_id) is not None,
        "daemon_id",
        "must be up to 64 letters, digits, '.', '_' or '-', starting with a letter or digit",
    )
    require(
        config.max_pages_per_host is None or config.max_pages_per_host >= 1,
        "max_pages_per_host",
        "must be at least 1",
    )
    require(config.frontier_memory >= 2, "frontier_memory", "must hold at least 2 URLs")
    require(
        config.gamma is None or (math.isfinite(config.gamma) and config.gamma > 0),
        "gamma",
        "must be a positive number",
    )
    pools = names("pool")
    require(
        config.fetchers in pools,
        "fetchers",
        f"must be one of {', '.join(pools)} (got {config.fetchers!r})",
    )
    require(0 <= config.metrics_port <= 65535, "metrics_port", "must be a port (0 disables)")
    require(
        config.api_token is None or _API_TOKEN.fullmatch(config.api_token) is not None,
        "api_token",
        "must be at least 16 characters of printable ASCII without spaces "
        "(e.g. the output of `openssl rand -hex 32`)",
    )
    require(
        PRODUCT_TOKEN.match(config.user_agent.strip()) is not None,
        "user_agent",
        "must start with a product token (letters, '-' or '_'), as robots.txt names it",
    )
    known = names("frontier")
    require(
        config.policy in known,
        "policy",
        f"must be one of {', '.join(known)} (got {config.policy!r})",
    )
    require(
        config.revisit in REVISIT_POLICIES,
        "revisit",
        f"must be one of {', '.join(REVISIT_POLICIES)} (got {config.revisit!r})",
    )
    for name in (
        "delay",
        "duration",
        "connect_timeout",
        "total_timeout",
        "revisit_period",
        "revisit_budget",
        "interest_half_life",
        "lease_seconds",
        "db_outage_seconds",
    ):
        value = getattr(config, name)
        require(value is None or math.isfinite(value), name, "must be finite")

    config.half_lives()  # each names its prefix and a positive number of seconds
    require(
        0 <= config.near_duplicate_distance <= defaults.NEAR_DUPLICATE_MAX_DISTANCE,
        "near_duplicate_distance",
        f"must be between 0 and {defaults.NEAR_DUPLICATE_MAX_DISTANCE} bits",
    )
    require(config.near_duplicate_memory >= 0, "near_duplicate_memory", "must not be negative")
    for code in config.languages:
        require(
            code in LANGUAGES,
            "languages",
            f"has {code!r}, not a language the detector knows (ISO 639-1: en, de, ja, ...)",
        )
    for parameter in config.strip_params:
        error = parameter_error(parameter)
        require(error is None, "strip_params", f"has {parameter!r}: {error}")
    for name in ("include_urls", "exclude_urls"):
        for pattern in getattr(config, name):
            error = pattern_error(pattern)
            require(error is None, name, f"has {pattern!r}, not a regular expression: {error}")


def require(condition: bool, name: str, message: str) -> None:
    if not condition:
        raise ConfigError(f"setting {name!r} {message}")
