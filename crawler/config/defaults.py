"""Every setting's default, once. The settings (`crawler.config.settings`) and the
components that take a section of them (re-visits, the engine's limits) read them here."""

from __future__ import annotations

from crawler.net.url_parameters import TRACKING_PARAMETERS
from policies.relevance import DEFAULT_FEEDBACK_WEIGHT

DB = "sqlite+aiosqlite:///crawl.db"
LOG_FORMAT = "text"  # or "json" (crawler.config.sections.LOG_FORMATS)
DB_OUTAGE_SECONDS = 60.0  # a database restart or fail-over the crawl waits out
POLICY = "best-first"
RELEVANCE_THRESHOLD = 0.1  # cosine at which a page counts as relevant (short topics score low)
STRIP_PARAMS = TRACKING_PARAMETERS  # removed from canonical URLs (crawler/net/urls.py)
TOPIC_FEEDBACK = DEFAULT_FEEDBACK_WEIGHT  # the relevant pages' words beside the topic's

CONCURRENCY = 16  # fetches in flight across all hosts
BUFFER = 16  # K: pages queued for the processor, the one in service included
FRONTIER_MEMORY = 100_000  # frontier URLs held in memory; the rest wait in the database
HOST_MEMORY = 10_000  # hosts whose state is held in memory; idle others wait in the database
# bits of 64 between the SimHashes of near-duplicate main texts (docs/crawling.md)
NEAR_DUPLICATE_DISTANCE = 4
# beyond, the index's bands are of 9 bits or fewer: a lookup compares too many
NEAR_DUPLICATE_MAX_DISTANCE = 6
NEAR_DUPLICATE_MEMORY = 100_000  # fingerprints held to find near-duplicates (some 27 MB)

USER_AGENT = "topical-crawler/0.1"
CONNECT_TIMEOUT = 10.0
TOTAL_TIMEOUT = 30.0
MAX_BODY_BYTES = 5 * 1024 * 1024
MAX_REDIRECTS = 5

DELAY = 1.0  # seconds between the end of a response and the next request to a host
PER_HOST_CONCURRENCY = 1
MAX_RETRIES = 3  # times a throttled URL goes back to the frontier
MAX_BACKOFF = 600.0  # seconds: the longest a failing host is left alone
ROBOTS_TTL = 86_400.0  # seconds a robots.txt is trusted
ROBOTS_RETRY = 600.0  # seconds before asking again after a robots.txt 5xx
SITEMAP_MAX_URLS = 50_000  # a host's sitemap entries in all: what one full file may hold

FETCHERS = "mdp"  # the pool policy
FULL_QUEUE = "block"  # a page meeting a full processor queue waits with its fetcher
# bytes below which a page is analysed on the event loop even with worker processes:
# handing a page over costs both processes more than analysing one this small
INLINE_BELOW = 8192

REVISIT = "off"
REVISIT_PERIOD = 300.0  # seconds between re-visit plans
REVISIT_BUDGET = 10.0  # re-visit cost a period (a source costs 1 on a host at the delay)
INTEREST_HALF_LIFE = 86_400.0  # seconds for a new item's worth to halve
SOURCE_MIN_LINKS = 20  # links in scope that make a page a source
MAX_SOURCES = 10_000

METRICS_HOST = "127.0.0.1"
METRICS_PORT = 9410
PROGRESS_INTERVAL = 30.0  # seconds between progress log lines (as a daemon)

WARC_MAX_SIZE = 1_000_000_000  # bytes a WARC file grows to before the next starts
WARC_PREFIX = "crawl"  # WARC files are <prefix>-<timestamp>-<serial>.warc.gz

LEASE_SECONDS = 60.0  # a shared crawl's host lease; a killed daemon's hosts wait this long
