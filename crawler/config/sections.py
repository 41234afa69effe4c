"""The sections of a crawl's settings as types, as httpx's `Timeout` and `Limits` are:
small, immutable, validated, each handed to the part that needs it. A section's fields
are named as its settings, with no defaults of their own: it is built only from a
`CrawlConfig` (`config.limits`, ...), whose declarations hold the defaults, the help,
the flags and the TOML keys. Each checks its values when built, a bad one raising a
`ConfigError` that names the setting; `CrawlConfig` builds them all when it is made."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from crawler.config import defaults
from crawler.errors import ConfigError
from crawler.languages import LANGUAGES
from crawler.net.robots_txt import PRODUCT_TOKEN
from crawler.net.url_filters import pattern_error
from crawler.net.url_parameters import parameter_error
from policies.registry import names

FULL_QUEUE_POLICIES = ("block", "drop")  # a page meeting a full processor queue: wait, or drop
LOG_FORMATS = ("text", "json")
REVISIT_POLICIES = (*names("revisit"), "off")  # off: no re-visits
_WARC_PREFIX = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_DAEMON_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_API_TOKEN = re.compile(r"[\x21-\x7e]{16,}")  # printable ASCII, no space: a header's value


@dataclass(frozen=True, slots=True, kw_only=True)
class Crawl:
    """What is crawled, where it is kept, and what counts as relevant."""

    seeds: tuple[str, ...]
    topic: str
    db: str
    db_outage_seconds: float
    policy: str
    patience: float | None
    allowed_domains: tuple[str, ...]
    max_depth: int | None
    include_urls: tuple[str, ...]
    exclude_urls: tuple[str, ...]
    sitemaps: bool
    strip_params: tuple[str, ...]
    relevance_threshold: float
    topic_feedback: float
    store_text: bool
    near_duplicate_distance: int
    languages: tuple[str, ...]

    def __post_init__(self) -> None:
        _each(self, ("db_outage_seconds",), _positive, "must be greater than 0")
        _each(self, ("max_depth",), _none_or(_not_negative), "must not be negative")
        threshold = self.relevance_threshold
        require(0.0 <= threshold <= 1.0, "relevance_threshold", "must be between 0 and 1")
        require(math.isfinite(self.topic_feedback), "topic_feedback", "must be finite")
        require(self.topic_feedback >= 0, "topic_feedback", "must not be negative")
        patience = self.patience
        require(patience is None or 0.0 <= patience <= 1.0, "patience", "must be between 0 and 1")
        _one_of(self.policy, names("frontier"), "policy")
        _each(self, ("db_outage_seconds",), math.isfinite, "must be finite")
        require(
            0 <= self.near_duplicate_distance <= defaults.NEAR_DUPLICATE_MAX_DISTANCE,
            "near_duplicate_distance",
            f"must be between 0 and {defaults.NEAR_DUPLICATE_MAX_DISTANCE} bits",
        )
        for code in self.languages:
            require(
                code in LANGUAGES,
                "languages",
                f"has {code!r}, not a language the detector knows (ISO 639-1: en, de, ja, ...)",
            )
        for parameter in self.strip_params:
            error = parameter_error(parameter)
            require(error is None, "strip_params", f"has {parameter!r}: {error}")
        for name in ("include_urls", "exclude_urls"):
            for pattern in getattr(self, name):
                error = pattern_error(pattern)
                require(error is None, name, f"has {pattern!r}, not a regular expression: {error}")

    def check_runnable(self) -> None:
        """What `crawler run` needs beyond valid values."""
        require(bool(self.seeds), "seeds", "give at least one seed URL (--seed or --seeds-file)")
        require(bool(self.topic.strip()), "topic", "give a topic (--topic or --topic-file)")


@dataclass(frozen=True, slots=True, kw_only=True)
class Limits:
    """When the crawl stops, how much is under way at once, how much is held in memory."""

    max_pages: int | None
    duration: float | None
    max_pages_per_host: int | None
    sitemap_max_urls: int
    concurrency: int
    buffer: int  # K: pages queued for the processor, the one in service included
    frontier_memory: int
    near_duplicate_memory: int
    host_memory: int

    def __post_init__(self) -> None:
        positive = ("concurrency", "host_memory", "sitemap_max_urls")
        _each(self, positive, _positive, "must be greater than 0")
        _each(self, ("max_pages", "duration"), _none_or(_not_negative), "must not be negative")
        require(self.buffer >= 2, "buffer", "must hold at least 2 pages")
        require(
            self.max_pages_per_host is None or self.max_pages_per_host >= 1,
            "max_pages_per_host",
            "must be at least 1",
        )
        require(self.frontier_memory >= 2, "frontier_memory", "must hold at least 2 URLs")
        _each(self, ("duration",), _none_or(math.isfinite), "must be finite")
        require(self.near_duplicate_memory >= 0, "near_duplicate_memory", "must not be negative")


@dataclass(frozen=True, slots=True, kw_only=True)
class Fetch:
    """The requests: who asks, how long and how much is waited for, where they may go."""

    user_agent: str
    connect_timeout: float
    total_timeout: float
    max_body_bytes: int
    max_redirects: int
    allow_private_networks: bool
    allowed_networks: tuple[str, ...]
    dns_servers: tuple[str, ...]

    def __post_init__(self) -> None:
        positive = ("connect_timeout", "total_timeout", "max_body_bytes")
        _each(self, positive, _positive, "must be greater than 0")
        _each(self, ("max_redirects",), _not_negative, "must not be negative")
        _each(self, ("connect_timeout", "total_timeout"), math.isfinite, "must be finite")
        require(
            PRODUCT_TOKEN.match(self.user_agent.strip()) is not None,
            "user_agent",
            "must start with a product token (letters, '-' or '_'), as robots.txt names it",
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Politeness:
    """Each host's delay, concurrency, back-off, retries and robots.txt."""

    delay: float
    per_host_concurrency: int
    max_retries: int
    max_backoff: float
    robots_ttl: float
    robots_retry: float

    def __post_init__(self) -> None:
        positive = ("per_host_concurrency", "robots_ttl", "robots_retry", "max_backoff")
        _each(self, positive, _positive, "must be greater than 0")
        _each(self, ("delay", "max_retries"), _not_negative, "must not be negative")
        _each(self, ("delay",), math.isfinite, "must be finite")


@dataclass(frozen=True, slots=True, kw_only=True)
class Pool:
    """The fetcher pool's policy and the processor's servers and full queue. How many
    servers the buffer allows is the limits' (`CrawlConfig.processor_count`)."""

    fetchers: str
    processors: int | None
    inline_below: int
    full_queue: str
    gamma: float | None

    def __post_init__(self) -> None:
        require(self.inline_below >= 0, "inline_below", "must be 0 or more bytes")
        _one_of(self.full_queue, FULL_QUEUE_POLICIES, "full_queue")
        require(
            self.gamma is None or (math.isfinite(self.gamma) and self.gamma > 0),
            "gamma",
            "must be a positive number",
        )
        _one_of(self.fetchers, names("pool"), "fetchers")

    @property
    def drop_at_full_queue(self) -> bool:
        """Whether a page meeting a full queue is lost (the paper's loss), not waited for."""
        return self.full_queue == "drop"


@dataclass(frozen=True, slots=True, kw_only=True)
class Revisits:
    """Re-visiting sources of new content (Avrachenkov & Borkar)."""

    revisit: str  # a registered re-visit policy, or off
    revisit_period: float
    revisit_budget: float
    interest_half_life: float
    source_half_lives: tuple[str, ...]  # URL_PREFIX=SECONDS
    source_min_links: int
    max_sources: int

    def __post_init__(self) -> None:
        finite = ("revisit_period", "revisit_budget", "interest_half_life")
        _each(
            self, (*finite, "source_min_links", "max_sources"), _positive, "must be greater than 0"
        )
        _one_of(self.revisit, REVISIT_POLICIES, "revisit")
        _each(self, finite, math.isfinite, "must be finite")
        self.half_lives()  # each names its prefix and a positive number of seconds

    @property
    def enabled(self) -> bool:
        return self.revisit != "off"

    def half_lives(self) -> tuple[tuple[str, float], ...]:
        """`source_half_lives` as (prefix, seconds) pairs."""
        pairs = []
        for entry in self.source_half_lives:
            prefix, _, seconds = entry.rpartition("=")
            try:
                value = float(seconds)
            except ValueError:
                value = math.nan
            require(
                bool(prefix) and math.isfinite(value) and value > 0,
                "source_half_lives",
                f"entries are URL_PREFIX=SECONDS with SECONDS > 0 (got {entry!r})",
            )
            pairs.append((prefix, value))
        return tuple(pairs)

    def decay_per_period(self, url: str) -> float:
        """mu of the source at `url`, per period: its longest prefix's half-life wins."""
        half_life = self.interest_half_life
        matched = -1
        for prefix, seconds in self.half_lives():
            if url.startswith(prefix) and len(prefix) > matched:
                half_life, matched = seconds, len(prefix)
        return math.log(2.0) / half_life * self.revisit_period


@dataclass(frozen=True, slots=True, kw_only=True)
class Metrics:
    """The /metrics and /healthz server, the progress lines, the logs' format."""

    metrics_host: str
    metrics_port: int
    progress_interval: float
    log_format: str

    def __post_init__(self) -> None:
        _each(self, ("progress_interval",), _positive, "must be greater than 0")
        _one_of(self.log_format, LOG_FORMATS, "log_format")
        require(0 <= self.metrics_port <= 65535, "metrics_port", "must be a port (0 disables)")


@dataclass(frozen=True, slots=True, kw_only=True)
class Api:
    """The HTTP API and web page on the metrics server."""

    api_token: str | None = field(repr=False)  # logs and errors may show a repr
    api_hosts: tuple[str, ...]

    def __post_init__(self) -> None:
        require(
            self.api_token is None or _API_TOKEN.fullmatch(self.api_token) is not None,
            "api_token",
            "must be at least 16 characters of printable ASCII without spaces "
            "(e.g. the output of `openssl rand -hex 32`)",
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Warc:
    """WARC files of every answer."""

    warc: str | None  # the directory; None: no WARC files
    warc_max_size: int
    warc_prefix: str

    def __post_init__(self) -> None:
        _each(self, ("warc_max_size",), _positive, "must be greater than 0")
        require(self.warc is None or bool(self.warc.strip()), "warc", "must name a directory")
        require(
            _WARC_PREFIX.fullmatch(self.warc_prefix) is not None,
            "warc_prefix",
            "must be letters, digits, '.', '_' or '-', starting with a letter or digit",
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Cluster:
    """A crawl shared by several daemons on PostgreSQL."""

    daemon_id: str | None
    lease_seconds: float

    def __post_init__(self) -> None:
        _each(self, ("lease_seconds",), _positive, "must be greater than 0")
        require(
            self.daemon_id is None or _DAEMON_ID.fullmatch(self.daemon_id) is not None,
            "daemon_id",
            "must be up to 64 letters, digits, '.', '_' or '-', starting with a letter or digit",
        )
        _each(self, ("lease_seconds",), math.isfinite, "must be finite")


# by the name of its table in a TOML file and its flags' group in `crawler run --help`
TYPES: dict[str, type] = {
    "crawl": Crawl,
    "limits": Limits,
    "fetch": Fetch,
    "politeness": Politeness,
    "pool": Pool,
    "revisits": Revisits,
    "metrics": Metrics,
    "api": Api,
    "warc": Warc,
    "cluster": Cluster,
}


def require(condition: bool, name: str, message: str) -> None:
    if not condition:
        raise ConfigError(f"setting {name!r} {message}")


def _each(
    section: object, fields: tuple[str, ...], test: Callable[[Any], bool], message: str
) -> None:
    for name in fields:
        require(test(getattr(section, name)), name, message)


def _one_of(value: str, known: Sequence[str], name: str) -> None:
    require(value in known, name, f"must be one of {', '.join(known)} (got {value!r})")


def _positive(value: float) -> bool:
    return value > 0


def _not_negative(value: float) -> bool:
    return value >= 0


def _none_or(test: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda value: value is None or test(value)
