"""Each host's sitemaps: which files are left to read, and what the host has used of its
bounds. A host's plan starts when a visit first holds its turn with its robots.txt
known: the `Sitemap:` lines of its robots.txt that name the host itself, else its
`/sitemap.xml`. A sitemap index adds its sitemaps to the plan, to `MAX_INDEX_DEPTH`
levels below those; a redirect adds its target on the same host. A sitemap of another
host is ignored (the host it names may not have chosen this one's robots.txt to speak
for it, and reading it would need that host's turn).

A file whose answer failed in a way that passes (a 429 or a 5xx, a timeout, a connection
error) is planned again once, at the plan's end.

A host's files are bounded (`MAX_HOST_FILES`), and so are their entries and bytes in
all (`max_urls`, `MAX_HOST_BYTES`): each file is read with what is left. A plan is kept
with the host's record in the database (`as_text`, `of_text`), so a file read once is
not read again when the crawl resumes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from yarl import URL

from crawler.fetch.exchange import Exchange
from crawler.fetch.robots import RobotsEntry
from crawler.fetch.sitemap_xml import MAX_FILE_BYTES, MAX_FILE_ENTRIES, SitemapEntry, SitemapReader
from crawler.net.urls import BadUrlError, canonicalize, host_key

MAX_HOST_BYTES = MAX_FILE_BYTES  # a host's sitemap bytes in all (after inflating)
MAX_HOST_FILES = 50  # sitemap files a host may have read (or skipped), index files included
MAX_INDEX_DEPTH = 2  # robots.txt's sitemaps are at 0; an index at this depth is not followed


@dataclass(slots=True)
class HostSitemaps:
    """A host's plan: the files left, in order, each with its depth, and what was used."""

    todo: list[tuple[str, int]] = field(default_factory=list)
    files: int = 0  # taken off the plan: read, failed or refused by robots.txt
    urls: int = 0  # entries read
    size: int = 0  # bytes read
    tried_again: list[str] = field(default_factory=list)  # files planned a second time

    def next_file(self) -> tuple[str, int] | None:
        """The next file to read, taken off the plan."""
        if not self.todo:
            return None
        self.files += 1
        return self.todo.pop(0)

    def add(self, url: str, depth: int) -> bool:
        """Plan `url` at `depth`, if there is room; whether it was planned."""
        if self.files + len(self.todo) >= MAX_HOST_FILES or any(url == u for u, _ in self.todo):
            return False
        self.todo.append((url, depth))
        return True

    def try_again(self, url: str, depth: int) -> bool:
        """Plan `url` once more after an answer that may pass; whether it was planned
        (not if it was tried again already, or the plan is full)."""
        if url in self.tried_again or not self.add(url, depth):
            return False
        self.tried_again.append(url)
        return True

    def as_text(self) -> str:
        return json.dumps(
            {
                "todo": self.todo,
                "files": self.files,
                "urls": self.urls,
                "bytes": self.size,
                "tried_again": self.tried_again,
            }
        )

    @classmethod
    def of_text(cls, text: str) -> HostSitemaps:
        saved = json.loads(text)
        return cls(
            [(str(url), int(depth)) for url, depth in saved["todo"]],
            int(saved["files"]),
            int(saved["urls"]),
            int(saved["bytes"]),
            [str(url) for url in saved.get("tried_again", [])],  # none in an older plan
        )


class Sitemaps:
    """The hosts' plans in memory; `enabled` false: no host has one."""

    def __init__(self, *, enabled: bool = True, max_urls: int = MAX_FILE_ENTRIES) -> None:
        self.enabled = enabled
        self.max_urls = max_urls
        self._plans: dict[str, HostSitemaps] = {}

    @classmethod
    def off(cls) -> Sitemaps:
        return cls(enabled=False)

    def plan(self, host: str, origin: URL, robots: RobotsEntry) -> HostSitemaps | None:
        """`host`'s plan, made from its robots.txt if it has none yet; None when
        sitemaps are off."""
        if not self.enabled:
            return None
        plan = self._plans.get(host)
        if plan is None:
            plan = self._plans[host] = HostSitemaps()
            named = () if robots.rules is None else robots.rules.sitemaps
            for raw in named:
                try:
                    url = canonicalize(raw, base=origin)
                except BadUrlError:
                    continue
                if host_key(url) == host:
                    plan.add(str(url), 0)
            if not named:
                plan.add(str(origin.with_path("/sitemap.xml")), 0)
        return plan

    def reader(self, plan: HostSitemaps) -> SitemapReader:
        """A reader for `plan`'s next file, within what its host has left."""
        return SitemapReader(
            max_entries=max(0, min(MAX_FILE_ENTRIES, self.max_urls - plan.urls)),
            max_bytes=max(0, min(MAX_FILE_BYTES, MAX_HOST_BYTES - plan.size)),
        )

    def spent(self, plan: HostSitemaps) -> bool:
        """Whether `plan`'s host has used all the entries or bytes it may read."""
        return plan.urls >= self.max_urls or plan.size >= MAX_HOST_BYTES

    def saved(self, host: str) -> str | None:
        """`host`'s plan as the database keeps it; None: not begun."""
        plan = self._plans.get(host)
        return None if plan is None else plan.as_text()

    def restore(self, host: str, text: str | None) -> None:
        """`host`'s plan as the database kept it."""
        if text is not None:
            self._plans[host] = HostSitemaps.of_text(text)

    def forget(self, host: str) -> None:
        """Drop `host`'s plan: `crawler.fetch.host_memory` keeps idle hosts in the database."""
        self._plans.pop(host, None)


@dataclass(frozen=True, slots=True)
class SitemapRead:
    """One sitemap file asked for in its host's turn, and the page URLs it gave (an
    index's sitemaps go to the host's plan instead)."""

    host: str
    url: str
    result: str  # one of RESULTS
    entries: tuple[SitemapEntry, ...] = ()
    captures: tuple[Exchange, ...] = ()  # its answer, when answers are archived


RESULTS = ("read", "cut", "failed", "redirected")  # `cut`: read to a limit, the rest ignored
