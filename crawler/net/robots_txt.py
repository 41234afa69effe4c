"""A robots.txt read as RFC 9309 and Google's reference parser (google/robotstxt) read it.

Lines end at CR, LF or CRLF; a UTF-8 byte order mark, whole or partial, is skipped; `#`
starts a comment; a key and its value are split at a colon, or at the white space
between two words when the colon is missing. Keys are recognised by their start,
case-insensitively, with the common misspellings (`useragent`, `dissallow`, ...).

A group is the User-agent lines in a row and the rules after them: only an Allow or a
Disallow ends the run of User-agent lines, so an unknown line or a Crawl-delay between
two User-agent lines leaves them one group. A User-agent value is its product token
(`FooBot` of `FooBot/2.1 extra`). A crawler obeys every group naming its token, else
every `*` group. The longest matching pattern decides; on a tie, Allow wins.

Patterns match the URL's path and query as written: `*` is any run of characters, a
final `$` the end. A pattern's non-ASCII characters are percent-encoded and its escapes
upper-cased, never decoded (`/%62` matches `/%62`, not `/b`). `/robots.txt` itself is
always allowed (RFC 9309 2.5). Crawl-delay (the largest a crawler's groups give) and
Sitemap lines, which RFC 9309 leaves to crawlers, are kept.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

_LINE_END = re.compile(r"\r\n|\r|\n")
# the bytes of a UTF-8 byte order mark, as a body decoded with errors="replace" shows
# them: the whole mark, or U+FFFD for a part of it
_BYTE_ORDER_MARKS = ("\ufeff", "\ufffd", "\xef\xbb\xbf", "\xef\xbb", "\xef")
_USER_AGENT_KEYS = ("user-agent", "useragent", "user agent")
_DISALLOW_KEYS = ("disallow", "dissallow", "dissalow", "disalow", "diasllow", "disallaw")
_SITEMAP_KEYS = ("sitemap", "site-map")
_CRAWL_DELAY_KEYS = ("crawl-delay", "crawl delay")
# what robots.txt groups name of a user agent (RFC 9309 2.2.1: a-z, A-Z, _, -)
PRODUCT_TOKEN = re.compile(r"[A-Za-z_-]+")
_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")


@dataclass(slots=True)
class _Group:
    agents: set[str] = field(default_factory=set)  # product tokens, lower-cased; "*"
    rules: list[tuple[str, bool]] = field(default_factory=list)  # (pattern, allow)
    crawl_delays: list[float] = field(default_factory=list)


class RobotsTxt:
    """The groups and sitemaps of one robots.txt; `allowed` and `crawl_delay` answer
    for a crawler's product token."""

    def __init__(self, groups: list[_Group], sitemaps: list[str]) -> None:
        self._groups = groups
        self._obeyed: dict[str, list[_Group]] = {}  # by product token, lower-cased
        self.sitemaps: tuple[str, ...] = tuple(sitemaps)

    @classmethod
    def parse(cls, text: str) -> RobotsTxt:
        for mark in _BYTE_ORDER_MARKS:
            if text.startswith(mark):
                text = text[len(mark) :]
                break
        groups: list[_Group] = []
        sitemaps: list[str] = []
        group: _Group | None = None
        in_agents = False  # the last line that counts was a User-agent line
        for line in _LINE_END.split(text):
            parsed = _key_value(line)
            if parsed is None:
                continue
            key, value = parsed
            if key.startswith(_USER_AGENT_KEYS):
                if group is None or not in_agents:
                    group = _Group()
                    groups.append(group)
                in_agents = True
                group.agents.add(_agent(value))
            elif key.startswith(_SITEMAP_KEYS):
                if value:
                    sitemaps.append(value)
            elif group is None:
                continue  # a rule before any User-agent line applies to no one
            elif key.startswith("allow") or key.startswith(_DISALLOW_KEYS):
                in_agents = False
                if value:
                    group.rules.extend(_rules(_escaped(value), allow=key.startswith("allow")))
            elif key.startswith(_CRAWL_DELAY_KEYS):
                delay = _delay(value)
                if delay is not None:
                    group.crawl_delays.append(delay)
        return cls(groups, sitemaps)

    def _groups_for(self, token: str) -> list[_Group]:
        """The groups a crawler obeys: those naming its token, else those of `*`."""
        token = token.lower()
        obeyed = self._obeyed.get(token)
        if obeyed is None:
            named = [group for group in self._groups if token in group.agents]
            obeyed = named or [group for group in self._groups if "*" in group.agents]
            self._obeyed[token] = obeyed
        return obeyed

    def allowed(self, url: str, token: str) -> bool:
        """Whether the crawler named `token` may fetch `url` (absolute, or a path)."""
        path = path_params_query(url)
        if path == "/robots.txt":
            return True
        allow_length = disallow_length = -1
        for group in self._groups_for(token):
            for pattern, allow in group.rules:
                if _matches(path, pattern):
                    if allow:
                        allow_length = max(allow_length, len(pattern))
                    else:
                        disallow_length = max(disallow_length, len(pattern))
        return disallow_length <= allow_length

    def crawl_delay(self, token: str) -> float | None:
        """Seconds between requests the crawler named `token` is asked for, if any."""
        delays = [delay for group in self._groups_for(token) for delay in group.crawl_delays]
        return max(delays, default=None)


def _key_value(line: str) -> tuple[str, str] | None:
    """A line's key (lower-cased) and value, or None for a line with no key."""
    line = line.split("#", 1)[0].strip()
    key, colon, value = line.partition(":")
    if not colon:
        words = line.split()
        if len(words) != 2:  # a missing colon is accepted between two words only
            return None
        key, value = words
    key = key.strip().lower()
    return (key, value.strip()) if key else None


def _rules(pattern: str, *, allow: bool) -> list[tuple[str, bool]]:
    """The rules a line gives: an Allow of `/dir/index.html` (or `.htm`) allows `/dir/`
    too, the same page under the name servers give it."""
    rules = [(pattern, allow)]
    slash = pattern.rfind("/")
    if allow and pattern.startswith("/index.htm", slash):
        rules.append((f"{pattern[: slash + 1]}$", allow))
    return rules


def product_token(user_agent: str) -> str:
    """The part of a User-Agent that robots.txt groups name."""
    match = PRODUCT_TOKEN.match(user_agent.strip())
    if match is None:
        raise ValueError(f"user agent {user_agent!r} does not start with a product token")
    return match.group(0)


def _agent(value: str) -> str:
    """The product token a User-agent value names: `*` (followed by anything), or the
    letters, `_` and `-` it starts with."""
    if value[:1] == "*" and (len(value) == 1 or value[1].isspace()):
        return "*"
    token = PRODUCT_TOKEN.match(value)
    return token.group().lower() if token else ""


def _escaped(pattern: str) -> str:
    """`pattern` with its non-ASCII characters percent-encoded and its escapes in upper
    case, as URLs are written."""
    pattern = _ESCAPE.sub(lambda escape: escape.group().upper(), pattern)
    if pattern.isascii():
        return pattern
    return "".join(
        char if char.isascii() else "".join(f"%{b:02X}" for b in char.encode(errors="replace"))
        for char in pattern
    )


def _delay(value: str) -> float | None:
    try:
        delay = float(value)
    except ValueError:
        return None
    return delay if math.isfinite(delay) and delay >= 0 else None


def _matches(path: str, pattern: str) -> bool:
    """Whether `pattern` matches `path` from its start: each part between `*`s found
    at its leftmost place after the one before, which leaves the most room for the
    rest; a final `$` asks the last part to end the path."""
    anchored = pattern.endswith("$")
    if anchored:
        pattern = pattern[:-1]
    if "*" not in pattern:
        return path == pattern if anchored else path.startswith(pattern)
    first, *middle, last = pattern.split("*")
    if not path.startswith(first):
        return False
    at = len(first)
    for part in middle:
        found = path.find(part, at)
        if found < 0:
            return False
        at = found + len(part)
    if anchored:
        return len(path) - len(last) >= at and path.endswith(last)
    return path.find(last, at) >= 0


def path_params_query(url: str) -> str:
    """The part of `url` rules match: its path, parameters and query, `/` at least
    (google/robotstxt's GetPathParamsQuery)."""
    start = 2 if url.startswith("//") else 0
    early_path = _first_of(url, "/?;", start)
    scheme_end = url.find("://", start)
    if scheme_end < 0 or (early_path >= 0 and early_path < scheme_end):
        scheme_end = start
    else:
        scheme_end += 3
    path_start = _first_of(url, "/?;", scheme_end)
    if path_start < 0:
        return "/"
    fragment = url.find("#", start)
    if 0 <= fragment < path_start:
        return "/"
    path = url[path_start : fragment if fragment >= 0 else len(url)]
    return path if path.startswith("/") else f"/{path}"


def _first_of(text: str, characters: str, start: int) -> int:
    found = [at for at in (text.find(c, start) for c in characters) if at >= 0]
    return min(found, default=-1)
