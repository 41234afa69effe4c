"""robots.txt per RFC 9309, read by `crawler.net.robots_txt` and cached per host.

2xx: the rules apply. 4xx (but 429): no rules, everything is allowed. 5xx, 429 or no
answer: everything is disallowed, and the host is asked again after `retry` seconds.
Groups are matched on the user agent's product token (RFC 9309 2.2.1: `testbot` of
`testbot/2.0 (+https://example.org/bot)`), never on its version or contact URL.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from crawler.net.robots_txt import RobotsTxt, product_token

MAX_ROBOTS_BYTES = 500 * 1024  # RFC 9309 asks parsers to read at least 500 KiB
MAX_ROBOTS_REDIRECTS = 5  # RFC 9309 2.3.1.2: follow at least five


class Verdict(Enum):
    ALLOW = "allow"
    DISALLOW = "disallow"
    UNAVAILABLE = "unavailable"  # robots.txt could not be had: ask again later


@dataclass(frozen=True, slots=True)
class RobotsEntry:
    status: int | None  # None: no answer at all
    body: str | None
    fetched_at: float  # unix seconds
    rules: RobotsTxt | None

    @property
    def available(self) -> bool:
        return self.status is not None and self.status < 500 and self.status != 429


class RobotsCache:
    def __init__(self, *, user_agent: str, ttl: float, retry: float) -> None:
        self.user_agent = user_agent
        self.token = product_token(user_agent)
        self.ttl = ttl
        self.retry = retry
        self._entries: dict[str, RobotsEntry] = {}

    def get(self, host: str, now: float) -> RobotsEntry | None:
        """The cached entry for `host`, or None if it must be fetched (again)."""
        entry = self._entries.get(host)
        if entry is None:
            return None
        lifetime = self.ttl if entry.available else self.retry
        return entry if now < entry.fetched_at + lifetime else None

    def store(self, host: str, status: int | None, body: str | None, now: float) -> RobotsEntry:
        rules = None
        if status is not None and 200 <= status < 300 and body:
            rules = RobotsTxt.parse(body)
        entry = RobotsEntry(status=status, body=body, fetched_at=now, rules=rules)
        self._entries[host] = entry
        return entry

    def forget(self, host: str) -> None:
        """Drop `host`'s entry: `crawler.fetch.host_memory` keeps idle hosts in the database."""
        self._entries.pop(host, None)

    def __len__(self) -> int:
        return len(self._entries)

    def verdict(self, entry: RobotsEntry, url: str) -> Verdict:
        if not entry.available:
            return Verdict.UNAVAILABLE
        if entry.rules is None or entry.rules.allowed(url, self.token):
            return Verdict.ALLOW
        return Verdict.DISALLOW

    def crawl_delay(self, entry: RobotsEntry) -> float:
        if entry.rules is None:
            return 0.0
        delay = entry.rules.crawl_delay(self.token)
        return delay if delay is not None else 0.0
