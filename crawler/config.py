"""Settings of a crawl: defaults here, then a TOML file, then CRAWLER_* variables, then flags.

A bad setting fails at start with a message that names it.
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, get_args, get_origin, get_type_hints

from crawler.errors import ConfigError
from crawler.net.robots import PRODUCT_TOKEN
from policies.registry import names

DEFAULT_DB = "sqlite+aiosqlite:///crawl.db"
DEFAULT_POLICY = "best-first"
DEFAULT_CONCURRENCY = 16  # fetches in flight across all hosts
DEFAULT_DELAY = 1.0  # seconds between the end of a response and the next request to a host
DEFAULT_METRICS_HOST = "127.0.0.1"
DEFAULT_METRICS_PORT = 9410
DEFAULT_USER_AGENT = "topical-crawler/0.1"
DEFAULT_CONNECT_TIMEOUT = 10.0
DEFAULT_TOTAL_TIMEOUT = 30.0
DEFAULT_MAX_BODY_BYTES = 5 * 1024 * 1024
DEFAULT_MAX_REDIRECTS = 5
DEFAULT_RELEVANCE_THRESHOLD = (
    0.1  # cosine at which a page counts as relevant (short topics score low)
)
DEFAULT_MAX_RETRIES = 3  # times a throttled URL goes back to the frontier
DEFAULT_MAX_BACKOFF = 600.0  # seconds: the longest a failing host is left alone
DEFAULT_ROBOTS_TTL = 86_400.0  # seconds a robots.txt is trusted
DEFAULT_ROBOTS_RETRY = 600.0  # seconds before asking again after a robots.txt 5xx
DEFAULT_HOST_MEMORY = 10_000  # hosts whose state is held in memory; idle others wait in the db
DEFAULT_BUFFER = 16  # K: pages queued for the processor, the one in service included
DEFAULT_FETCHERS = "mdp"  # the pool policy: mdp, mm1k, latency or fixed (concurrency)
FULL_QUEUE_POLICIES = ("block", "drop")  # a page meeting a full processor queue: wait, or drop
DEFAULT_PROGRESS_INTERVAL = 30.0  # seconds between progress log lines (as a daemon)
REVISIT_POLICIES = (*names("revisit"), "off")  # off: no re-visits
DEFAULT_WARC_MAX_SIZE = 1_000_000_000  # bytes a WARC file grows to before the next starts
DEFAULT_WARC_PREFIX = "crawl"  # WARC files are <prefix>-<timestamp>-<serial>.warc.gz
_WARC_PREFIX = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
DEFAULT_LEASE_SECONDS = 60.0  # a shared crawl's host lease; a killed daemon's hosts wait this long
_DAEMON_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
ENV_PREFIX = "CRAWLER_"


@dataclass(frozen=True, slots=True, kw_only=True)
class CrawlConfig:
    seeds: tuple[str, ...] = ()
    topic: str = ""
    db: str = DEFAULT_DB
    max_pages: int | None = None
    duration: float | None = None
    policy: str = DEFAULT_POLICY
    concurrency: int = DEFAULT_CONCURRENCY
    per_host_concurrency: int = 1
    delay: float = DEFAULT_DELAY
    max_depth: int | None = None
    allowed_domains: tuple[str, ...] = ()
    metrics_host: str = DEFAULT_METRICS_HOST
    metrics_port: int = DEFAULT_METRICS_PORT
    user_agent: str = DEFAULT_USER_AGENT
    allow_private_networks: bool = False
    allowed_networks: tuple[str, ...] = ()
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    total_timeout: float = DEFAULT_TOTAL_TIMEOUT
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    max_redirects: int = DEFAULT_MAX_REDIRECTS
    relevance_threshold: float = DEFAULT_RELEVANCE_THRESHOLD
    max_retries: int = DEFAULT_MAX_RETRIES
    max_backoff: float = DEFAULT_MAX_BACKOFF
    robots_ttl: float = DEFAULT_ROBOTS_TTL
    robots_retry: float = DEFAULT_ROBOTS_RETRY
    buffer: int = DEFAULT_BUFFER
    frontier_memory: int = 100_000  # frontier URLs held in memory; the rest wait in the database
    host_memory: int = DEFAULT_HOST_MEMORY
    fetchers: str = DEFAULT_FETCHERS
    full_queue: str = "block"  # "drop": the paper's loss, the page fetched again later
    gamma: float | None = None  # None: gamma(K) for the current mu (policies.fetcher_pool)
    store_text: bool = True
    progress_interval: float = DEFAULT_PROGRESS_INTERVAL
    revisit: str = "off"  # the re-visit policy for sources (crawler.engine.revisits)
    revisit_period: float = 300.0  # seconds between re-visit plans
    revisit_budget: float = 10.0  # re-visits a period (a source on a slow host costs more)
    interest_half_life: float = 86_400.0  # seconds for a new item's interest to halve
    source_half_lives: tuple[str, ...] = ()  # "URL_PREFIX=SECONDS": other sources' decay
    source_min_links: int = 20  # links in scope that make a page a source
    max_sources: int = 10_000
    warc: str | None = None  # a directory for WARC files of every answer; None: none kept
    warc_max_size: int = DEFAULT_WARC_MAX_SIZE
    warc_prefix: str = DEFAULT_WARC_PREFIX
    # a crawl shared by several daemons (PostgreSQL): this daemon's name (None: the
    # machine's name and a random suffix) and how long its leases of hosts last
    daemon_id: str | None = None
    lease_seconds: float = DEFAULT_LEASE_SECONDS

    def __post_init__(self) -> None:
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
        )
        for name in positive:
            _require(getattr(self, name) > 0, name, "must be greater than 0")
        for name in ("delay", "max_redirects", "max_retries"):
            _require(getattr(self, name) >= 0, name, "must not be negative")
        for name in ("max_pages", "duration", "max_depth"):
            value = getattr(self, name)
            _require(value is None or value >= 0, name, "must not be negative")
        _require(
            0.0 <= self.relevance_threshold <= 1.0, "relevance_threshold", "must be between 0 and 1"
        )
        _require(self.buffer >= 2, "buffer", "must hold at least 2 pages")
        _require(
            self.full_queue in FULL_QUEUE_POLICIES,
            "full_queue",
            f"must be one of {', '.join(FULL_QUEUE_POLICIES)} (got {self.full_queue!r})",
        )
        _require(self.warc is None or bool(self.warc.strip()), "warc", "must name a directory")
        _require(
            _WARC_PREFIX.fullmatch(self.warc_prefix) is not None,
            "warc_prefix",
            "must be letters, digits, '.', '_' or '-', starting with a letter or digit",
        )
        _require(
            self.daemon_id is None or _DAEMON_ID.fullmatch(self.daemon_id) is not None,
            "daemon_id",
            "must be up to 64 letters, digits, '.', '_' or '-', starting with a letter or digit",
        )
        _require(self.frontier_memory >= 2, "frontier_memory", "must hold at least 2 URLs")
        _require(
            self.gamma is None or (math.isfinite(self.gamma) and self.gamma > 0),
            "gamma",
            "must be a positive number",
        )
        pools = names("pool")
        _require(
            self.fetchers in pools,
            "fetchers",
            f"must be one of {', '.join(pools)} (got {self.fetchers!r})",
        )
        _require(0 <= self.metrics_port <= 65535, "metrics_port", "must be a port (0 disables)")
        _require(
            PRODUCT_TOKEN.match(self.user_agent.strip()) is not None,
            "user_agent",
            "must start with a product token (letters, '-' or '_'), as robots.txt names it",
        )
        known = names("frontier")
        _require(
            self.policy in known,
            "policy",
            f"must be one of {', '.join(known)} (got {self.policy!r})",
        )
        _require(
            self.revisit in REVISIT_POLICIES,
            "revisit",
            f"must be one of {', '.join(REVISIT_POLICIES)} (got {self.revisit!r})",
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
        ):
            value = getattr(self, name)
            _require(value is None or math.isfinite(value), name, "must be finite")

        self.half_lives()  # each names its prefix and a positive number of seconds

    def half_lives(self) -> tuple[tuple[str, float], ...]:
        """`source_half_lives` as (prefix, seconds) pairs."""
        pairs = []
        for entry in self.source_half_lives:
            prefix, _, seconds = entry.rpartition("=")
            try:
                value = float(seconds)
            except ValueError:
                value = math.nan
            _require(
                bool(prefix) and math.isfinite(value) and value > 0,
                "source_half_lives",
                f"entries are URL_PREFIX=SECONDS with SECONDS > 0 (got {entry!r})",
            )
            pairs.append((prefix, value))
        return tuple(pairs)

    def check_runnable(self) -> None:
        """What `crawler run` needs beyond valid values."""
        _require(bool(self.seeds), "seeds", "give at least one seed URL (--seed or --seeds-file)")
        _require(bool(self.topic.strip()), "topic", "give a topic (--topic or --topic-file)")


def _require(condition: bool, name: str, message: str) -> None:
    if not condition:
        raise ConfigError(f"setting {name!r} {message}")


def setting_names() -> list[str]:
    return [f.name for f in fields(CrawlConfig)]


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
    table = data.get("crawl", data)
    if not isinstance(table, dict):
        raise ConfigError(f"config file {str(path)!r}: [crawl] must be a table")
    return {key.replace("-", "_"): value for key, value in table.items()}


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
