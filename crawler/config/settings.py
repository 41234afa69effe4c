"""The settings of a crawl: each declared once, with its default
(`crawler.config.defaults`), its section and its help; those of the crawl section, what
is crawled, in `crawler.config.crawl_settings`. The flags of `crawler run`, the TOML
file's tables and the settings reference (docs/configuration.md) are made from these
declarations (`crawler.config.reference`). Each section is a type of its own
(`crawler.config.sections`: what each holds, and its checks), which `CrawlConfig` gives
as an attribute (`config.limits`, `config.politeness`, ...; the warc section's is
`warc_files`, as `warc` is its directory), built once. A bad setting fails at start with
a message that names it.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass

from crawler.config import defaults, sections
from crawler.config.crawl_settings import CrawlSettings
from crawler.config.declaring import Section, sections_of, setting
from crawler.config.sections import REVISIT_POLICIES, require
from policies.registry import names


@dataclass(frozen=True, slots=True, kw_only=True)
class CrawlConfig(CrawlSettings):
    """Every setting: those of the crawl section (`CrawlSettings`), then the others."""

    # limits
    max_pages: int | None = setting(
        None, "limits", "stop after this many URLs are visited (in this run)"
    )
    duration: float | None = setting(None, "limits", "stop after this many seconds")
    max_pages_per_host: int | None = setting(
        None,
        "limits",
        "pages fetched from one host, at most, over the whole crawl (robots.txt and "
        "redirects not counted; docs/crawling.md)",
    )
    sitemap_max_urls: int = setting(
        defaults.SITEMAP_MAX_URLS,
        "limits",
        "sitemap entries read from one host, at most, its sitemap indexes' included; the "
        "rest are ignored",
    )
    concurrency: int = setting(
        defaults.CONCURRENCY,
        "limits",
        "visits fetching at once across all hosts (a redirect waiting for its target "
        "host's turn is not fetching)",
    )
    buffer: int = setting(
        defaults.BUFFER, "limits", "K: pages queued for the processor, the one in service included"
    )
    frontier_memory: int = setting(
        defaults.FRONTIER_MEMORY,
        "limits",
        "frontier URLs held in memory; the rest wait in the database and are read back "
        "in the policy's order",
    )
    near_duplicate_memory: int = setting(
        defaults.NEAR_DUPLICATE_MEMORY,
        "limits",
        "fingerprints of stored pages held to find near-duplicates among (some 270 bytes "
        "each), the least recently stored or matched leaving first; 0: no near-duplicates",
    )
    host_memory: int = setting(
        defaults.HOST_MEMORY,
        "limits",
        "hosts whose robots.txt and politeness state are held in memory; idle hosts "
        "beyond wait in the database and are read back when next visited",
    )
    # fetch
    user_agent: str = setting(
        defaults.USER_AGENT, "fetch", "User-Agent sent and matched in robots.txt; add a contact URL"
    )
    connect_timeout: float = setting(defaults.CONNECT_TIMEOUT, "fetch", "seconds to connect")
    total_timeout: float = setting(defaults.TOTAL_TIMEOUT, "fetch", "seconds for a whole request")
    max_body_bytes: int = setting(defaults.MAX_BODY_BYTES, "fetch", "largest body read")
    max_redirects: int = setting(defaults.MAX_REDIRECTS, "fetch", "redirects followed from one URL")
    allow_private_networks: bool = setting(
        False,
        "fetch",
        "allow private, loopback and link-local addresses (`--allow-private-networks`)",
        flag=False,
    )
    allowed_networks: tuple[str, ...] = setting(
        (), "fetch", "networks allowed anyway (`--allow-network CIDR`, repeatable)", flag=False
    )
    dns_servers: tuple[str, ...] = setting(
        (),
        "fetch",
        "DNS servers asked instead of the system's, HOST or HOST:PORT (`--dns-server`, "
        "repeatable; one port for all)",
        flag=False,
    )
    # politeness
    delay: float = setting(
        defaults.DELAY,
        "politeness",
        "minimum seconds between a response and the next request to its host",
    )
    per_host_concurrency: int = setting(
        defaults.PER_HOST_CONCURRENCY, "politeness", "requests at once to one host"
    )
    max_retries: int = setting(
        defaults.MAX_RETRIES, "politeness", "times a 429/503 URL is tried again"
    )
    max_backoff: float = setting(
        defaults.MAX_BACKOFF, "politeness", "longest wait, in seconds, imposed on a failing host"
    )
    robots_ttl: float = setting(
        defaults.ROBOTS_TTL, "politeness", "seconds a robots.txt is trusted"
    )
    robots_retry: float = setting(
        defaults.ROBOTS_RETRY, "politeness", "seconds before asking again after a 5xx robots.txt"
    )
    # pool
    fetchers: str = setting(
        defaults.FETCHERS,
        "pool",
        "fetcher pool policy: " + ", ".join(names("pool")) + " (docs/fetcher-pool.md)",
    )
    processors: int | None = setting(
        None,
        "pool",
        "processes that analyse pages (c servers of the processor's queue); 1: the event "
        "loop does it all; more: worker processes; by default one per core this process "
        "may use, at most buffer (docs/fetcher-pool.md)",
    )
    inline_below: int = setting(
        defaults.INLINE_BELOW,
        "pool",
        "with worker processes, a page of fewer bytes than this is analysed on the event "
        "loop: its hand-over would cost more than its analysis; 0: every page goes to a "
        "worker (docs/fetcher-pool.md)",
        metavar="BYTES",
    )
    full_queue: str = setting(
        defaults.FULL_QUEUE,
        "pool",
        "a page meeting a full processor queue waits with its fetcher (block) or is dropped "
        "and fetched again later (drop: the paper's loss)",
    )
    gamma: float | None = setting(
        None,
        "pool",
        "pool cost of an idle processor, in pages lost per second; by default "
        "gamma(K) = mu (K+2)/K for the current estimate of mu",
    )
    # revisits
    revisit: str = setting(
        defaults.REVISIT,
        "revisits",
        "re-visit policy for sources: " + ", ".join(REVISIT_POLICIES) + " (docs/revisits.md)",
    )
    revisit_period: float = setting(
        defaults.REVISIT_PERIOD, "revisits", "seconds between re-visit plans"
    )
    revisit_budget: float = setting(
        defaults.REVISIT_BUDGET,
        "revisits",
        "re-visit cost a period: a source costs 1, more on a host with a longer Crawl-delay",
    )
    interest_half_life: float = setting(
        defaults.INTEREST_HALF_LIFE,
        "revisits",
        "seconds for a new item's interest to halve (the topic's μ)",
    )
    source_half_lives: tuple[str, ...] = setting(
        (),
        "revisits",
        "other half-lives for the sources under a URL prefix (repeatable)",
        metavar="PREFIX=SECONDS",
    )
    source_min_links: int = setting(
        defaults.SOURCE_MIN_LINKS,
        "revisits",
        "links in scope that make a page a source (seeds always are)",
    )
    max_sources: int = setting(defaults.MAX_SOURCES, "revisits", "sources tracked, at most")
    # metrics
    metrics_host: str = setting(
        defaults.METRICS_HOST, "metrics", "address of the /metrics and /healthz server"
    )
    metrics_port: int = setting(
        defaults.METRICS_PORT, "metrics", "port of the metrics server (0 disables)"
    )
    progress_interval: float = setting(
        defaults.PROGRESS_INTERVAL,
        "metrics",
        "seconds between progress log lines when not on a terminal",
    )
    log_format: str = setting(
        defaults.LOG_FORMAT,
        "metrics",
        "log lines as text, or json: one JSON object per event (time, level, logger, "
        "message and the event's fields)",
    )
    # api
    api_token: str | None = setting(
        None,
        "api",
        "the bearer token the API's changing requests (seeds, pause, resume, labels) must "
        "carry; without one they are refused (403). Give it in CRAWLER_API_TOKEN rather "
        "than a flag, which other local users can read",
        metavar="TOKEN",
        secret=True,
    )
    api_hosts: tuple[str, ...] = setting(
        (),
        "api",
        "a name the API and the web page answer to beside IP addresses and localhost "
        "(repeatable): the name in the browser's address bar when it is not an address. "
        "Other names are refused, so that no web page can read the API through a name "
        "it makes resolve here (DNS rebinding)",
        metavar="NAME",
        flag_name="api-host",
    )
    # warc
    warc: str | None = setting(
        None,
        "warc",
        "a directory to write every answer to, as WARC files (docs/operations.md)",
        metavar="DIR",
    )
    warc_max_size: int = setting(
        defaults.WARC_MAX_SIZE, "warc", "bytes at which the next WARC file starts", metavar="BYTES"
    )
    warc_prefix: str = setting(defaults.WARC_PREFIX, "warc", "WARC file names begin with it")
    # cluster
    daemon_id: str | None = setting(
        None,
        "cluster",
        "this daemon's name in a shared crawl; default: the machine's name and a random suffix",
    )
    lease_seconds: float = setting(
        defaults.LEASE_SECONDS,
        "cluster",
        "how long a daemon's lease of a host lasts; a killed daemon's hosts wait this long",
    )

    # each section as a type, built once and validated (crawler.config.sections)
    crawl = Section(sections.Crawl)
    limits = Section(sections.Limits)
    fetch = Section(sections.Fetch)
    politeness = Section(sections.Politeness)
    pool = Section(sections.Pool)
    revisits = Section(sections.Revisits)
    metrics = Section(sections.Metrics)
    api = Section(sections.Api)
    warc_files = Section(sections.Warc)
    cluster = Section(sections.Cluster)

    def __post_init__(self) -> None:
        sections_of(self)  # each checks its own values
        require(
            self.processors is None or 1 <= self.processors <= self.buffer,
            "processors",
            f"must be between 1 and buffer ({self.buffer}): each works on a page of the queue",
        )

    def processor_count(self) -> int:
        """The processor's servers: `processors`, or one per usable core."""
        if self.processors is not None:
            return self.processors
        return max(1, min(usable_cores(), self.buffer))

    def check_runnable(self) -> None:
        """What `crawler run` needs beyond valid values."""
        self.crawl.check_runnable()


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity, where the system tells)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def setting_names() -> list[str]:
    return [f.name for f in dataclasses.fields(CrawlConfig)]


def section_of(name: str) -> str:
    """The section a setting belongs to."""
    return str(CrawlConfig.__dataclass_fields__[name].metadata["section"])
