"""The query and path parameters a URL's canonical form removes, so that one page is not
a thousand URLs: session ids (`;jsessionid=...`, `?sid=...`, ...) always, and tracking
parameters (`?utm_source=...`, `gclid`, ...: `TRACKING_PARAMETERS`, or the crawl's
`strip_params`, set once a process by `strip_parameters`). Compared without case.
`crawler.net.urls` applies them."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable
from dataclasses import dataclass

SESSION_PARAMETERS = frozenset(
    {"jsessionid", "phpsessid", "aspsessionid", "sid", "sessionid", "session_id", "cfid", "cftoken"}
)
# query parameters that say where a visitor came from, not which page: names, or globs
# (`utm_*`); compared without case
TRACKING_PARAMETERS = (
    "utm_*",  # Google Analytics' campaign parameters (utm_source, utm_medium, ...)
    "gclid",  # Google Ads
    "gclsrc",
    "dclid",  # Google Display
    "_ga",  # Google Analytics' cross-domain
    "_gl",
    "fbclid",  # Facebook
    "msclkid",  # Microsoft Ads
    "yclid",  # Yandex
    "mc_cid",  # Mailchimp
    "mc_eid",
    "igshid",  # Instagram
    "twclid",  # Twitter
    "ttclid",  # TikTok
    "_hsenc",  # HubSpot
    "_hsmi",
    "mkt_tok",  # Marketo
    "oly_anon_id",  # Omeda
    "oly_enc_id",
    "vero_id",  # Vero
)


def _name_pattern(globs: Iterable[str]) -> re.Pattern[str]:
    """One pattern that matches a parameter name any of `globs` does, without case."""
    names = [*sorted(SESSION_PARAMETERS), *globs]
    return re.compile("|".join(fnmatch.translate(name) for name in names), re.IGNORECASE)


_stripped = _name_pattern(TRACKING_PARAMETERS)  # session ids and the tracking parameters


def strip_parameters(globs: Iterable[str]) -> None:
    """The tracking parameters the canonical form removes in this process (session ids
    always are): names, or globs such as `utm_*`. Set once, at a crawl's start, before
    any URL is read: a URL's canonical form must not change during a crawl."""
    global _stripped
    _stripped = _name_pattern(globs)


@dataclass(frozen=True, slots=True)
class CanonicalRules:
    """A crawl's rules for canonical URLs, handed to its worker processes."""

    stripped: tuple[str, ...]  # as `strip_parameters` takes them

    def apply(self) -> None:
        strip_parameters(self.stripped)


def parameter_error(name: str) -> str | None:
    """What is wrong with `name` as a query parameter's name or glob, or None."""
    if not name or any(c in name for c in "=&#") or not name.isprintable() or " " in name:
        return "must be a parameter's name, or a glob such as utm_*, without = & # or spaces"
    return None


def without_path_session(path: str) -> str:
    """/shop;jsessionid=ABC/item -> /shop/item"""
    if ";" not in path:
        return path
    segments = []
    for segment in path.split("/"):
        name, _, parameter = segment.partition(";")
        key = parameter.split("=", 1)[0].lower()
        segments.append(name if parameter and key in SESSION_PARAMETERS else segment)
    return "/".join(segments)


def without_query_session(query: str) -> str:
    """The query without session ids and tracking parameters (`_stripped`)."""
    if not query:
        return query
    stripped = _stripped.match
    kept = [pair for pair in query.split("&") if not stripped(pair.partition("=")[0])]
    return "&".join(kept)
