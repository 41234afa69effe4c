"""The URL filters: `include_urls` and `exclude_urls`, regular expressions a URL must meet
before it is queued.

A URL is admitted if it matches at least one include pattern (when any is given) and no
exclude pattern, each pattern searched (`re.search`) in the URL's canonical form
(`crawler.net.urls.canonical`). The crawl's scope holds the filters
(`crawler.net.scope.Scope`), so every URL that would enter the frontier meets them where
it meets the scope: a page's links, a redirect's target, a sitemap's URLs, and the
seeds, a refused one being an error at start.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class UrlFilters:
    include: tuple[re.Pattern[str], ...] = ()
    exclude: tuple[re.Pattern[str], ...] = ()

    @classmethod
    def of(cls, include: Iterable[str] = (), exclude: Iterable[str] = ()) -> UrlFilters:
        """The filters of these patterns; re.error for one that is not a regular expression."""
        return cls(tuple(map(re.compile, include)), tuple(map(re.compile, exclude)))

    def admits(self, url: str) -> bool:
        """Whether the canonical URL `url` may be queued."""
        if self.exclude and any(pattern.search(url) for pattern in self.exclude):
            return False
        return not self.include or any(pattern.search(url) for pattern in self.include)

    def refusal(self, url: str) -> str | None:
        """Why `url` is refused, in words naming the pattern; None if it is admitted."""
        for pattern in self.exclude:
            if pattern.search(url):
                return f"it matches exclude_urls {pattern.pattern!r}"
        if self.include and not any(pattern.search(url) for pattern in self.include):
            return "it matches no include_urls pattern"
        return None


NO_FILTERS = UrlFilters()  # every URL admitted


def pattern_error(pattern: str) -> str | None:
    """What is wrong with `pattern` as a regular expression, or None."""
    try:
        re.compile(pattern)
    except re.error as error:
        return str(error)
    return None
