"""The crawler's exceptions, one tree. `crawler.cli.main` maps each branch to an exit code.

    CrawlerError
    ├── SettingsError          the user's input is wrong; nothing ran (exit 2)
    │   ├── ConfigError        a setting, named in the message
    │   ├── GraphFormatError   a ground-truth file, named in the message
    │   └── MissingExtra       an optional dependency; the message says how to install it
    ├── WarcError              a WARC file cannot be written: the crawl stops (exit 1)
    └── UrlError               one URL's failure: its outcome, never the crawl's end
        ├── BadUrlError        a URL that cannot be crawled
        ├── ContentError       a body that cannot be read as HTML
        ├── FetchError         a request with no usable answer; `outcome` says why
        └── PrivateNetworkError  the host resolves only to refused addresses

From outside the tree: `storage.StorageError` (the database failed: exit 1) and
`policies.NotFittedError` (a model used before it learned: a bug). Several classes keep
the built-in base their callers and libraries catch: aiohttp reports a connection refused
by the network guard only if it is an `OSError`.
"""

from __future__ import annotations

from crawler.outcomes import Outcome


class CrawlerError(Exception):
    """The root of the crawler's own exceptions."""


class SettingsError(CrawlerError, ValueError):
    """Input the user must correct before anything runs; the message names it."""


class ConfigError(SettingsError):
    """A setting is missing or invalid; the message names it."""


class GraphFormatError(SettingsError):
    """A ground-truth file that cannot be read as a graph; the message names where."""


class MissingExtra(SettingsError):
    """An optional dependency is not installed; the message says how to install it."""


class WarcError(CrawlerError, OSError):
    """A WARC file cannot be written or closed; the message names it."""


class UrlError(CrawlerError):
    """A failure of one URL: recorded as its outcome, the crawl goes on."""


class BadUrlError(UrlError, ValueError):
    """A URL that cannot be crawled; the message says why."""


class ContentError(UrlError, ValueError):
    """A body that cannot be read as HTML (binary, undecodable)."""


class FetchError(UrlError):
    """A request that got no usable answer; `outcome` says why."""

    def __init__(self, outcome: Outcome, detail: str) -> None:
        super().__init__(f"{outcome.value}: {detail}")
        self.outcome = outcome
        self.detail = detail


class PrivateNetworkError(UrlError, OSError):
    """The host resolves only to addresses the crawler is not allowed to reach."""
