"""The settings of the crawl section, what is crawled: the seeds and the topic, the
database, the frontier's order, the scope and the URL filters, what a page must be to
count and what is kept of it. `CrawlConfig` (`crawler.config.settings`) declares the
rest after them, in the order the flags and the reference list them.
"""

from __future__ import annotations

from dataclasses import dataclass

from crawler.config import defaults
from crawler.config.declaring import setting
from policies.registry import names


@dataclass(frozen=True, slots=True, kw_only=True)
class CrawlSettings:
    seeds: tuple[str, ...] = setting(
        (), "crawl", "seed URLs (`--seed`, repeatable; `--seeds-file`, one a line)", flag=False
    )
    topic: str = setting(
        "", "crawl", "the topic as text (`--topic`; `--topic-file` takes text or HTML)", flag=False
    )
    db: str = setting(
        defaults.DB,
        "crawl",
        "the database: a SQLite file (crawl.db, sqlite:///crawl.db) or "
        "postgresql://USER@HOST/DB (docs/cluster.md)",
    )
    db_outage_seconds: float = setting(
        defaults.DB_OUTAGE_SECONDS,
        "crawl",
        "how long the crawl waits for a database that cannot be reached (a restart, a "
        "fail-over, a SQLite file another process keeps locked), retrying, before it stops",
    )
    policy: str = setting(
        defaults.POLICY,
        "crawl",
        "frontier order: " + ", ".join(names("frontier")) + " (docs/frontier.md)",
    )
    patience: float | None = setting(
        None,
        "crawl",
        "fetch a URL only if it ranks at least this share of the best URL of a host busy "
        "with its usual turn, else wait for that host (0: never wait); default: the "
        "policy's own (qlearning 0.5, the others 0)",
    )
    allowed_domains: tuple[str, ...] = setting(
        (),
        "crawl",
        "domains (with subdomains) to stay in (`--allowed-domain`); default: the seeds' hosts",
        flag=False,
    )
    max_depth: int | None = setting(None, "crawl", "links followed from the seeds, at most")
    include_urls: tuple[str, ...] = setting(
        (),
        "crawl",
        "queue a URL only if a pattern matches it (`re.search` in the canonical URL; "
        "repeatable; a seed must match; docs/crawling.md)",
        metavar="REGEX",
        flag_name="include-url",
    )
    exclude_urls: tuple[str, ...] = setting(
        (),
        "crawl",
        "never queue a URL a pattern matches (`re.search` in the canonical URL; "
        "repeatable; a seed must not match)",
        metavar="REGEX",
        flag_name="exclude-url",
    )
    sitemaps: bool = setting(
        True,
        "crawl",
        "read each host's sitemaps (its robots.txt's Sitemap lines, else /sitemap.xml) for "
        "URLs to queue (`--no-sitemaps`; docs/crawling.md)",
        flag=False,
    )
    strip_params: tuple[str, ...] = setting(
        defaults.STRIP_PARAMS,
        "crawl",
        "query parameters removed from every URL's canonical form: names, or globs such "
        "as utm_* (`--strip-param`, repeatable; the list replaces the default)",
        metavar="NAME",
        flag_name="strip-param",
    )
    relevance_threshold: float = setting(
        defaults.RELEVANCE_THRESHOLD,
        "crawl",
        "relevance at which a page counts as relevant (status, metrics, feedback)",
    )
    topic_feedback: float = setting(
        defaults.TOPIC_FEEDBACK,
        "crawl",
        "weight of the relevant pages' words beside the topic's when links are estimated "
        "(Rocchio feedback; 0: the topic's words alone)",
    )
    store_text: bool = setting(
        True,
        "crawl",
        "keep each page's text (compressed) in the collection (`--no-store-text`)",
        flag=False,
    )
    near_duplicate_distance: int = setting(
        defaults.NEAR_DUPLICATE_DISTANCE,
        "crawl",
        "bits of 64 (0 to 6) within which a page's main text's SimHash makes it a "
        "near-duplicate of a stored page: stored as such, no reward for the frontier "
        "(docs/crawling.md)",
        metavar="BITS",
    )
    languages: tuple[str, ...] = setting(
        (),
        "crawl",
        "follow the links of pages in these languages only, ISO 639-1 codes "
        "(`--language`, repeatable); the others are stored with their language; "
        "default: every language",
        flag=False,
    )
