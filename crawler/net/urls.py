"""URL canonicalisation, on the URL Standard's parser (Ada, through ada-url); the crawl's
scope is in `crawler.net.scope`.

An input is parsed, or resolved against its base, as browsers do (WHATWG URL: `\\` read
as `/` in http(s) URLs, IPv4 numbers in any form, hosts mapped to punycode, dot segments
resolved); one the standard rejects is a BadUrlError, never a guess. On top of the
standard's form, one page is one row: the fragment and an empty query are dropped,
escapes of unreserved characters decoded and the others upper-cased (`%7E` is `~`, `%2f`
is `%2F`), and session ids (`;jsessionid=...`, `?sid=...`, ...) and tracking parameters
(`?utm_source=...`, `gclid`, ...: `TRACKING_PARAMETERS`, or the crawl's `strip_params`,
set once a process by `strip_parameters`) removed, so one page is not a thousand URLs.
Only http(s) URLs are crawlable.

A site's pages share most of their links (navigation, indexes), so a `LinkResolver`
resolves each distinct href once for every page it means the same on, and `KnownUrls`
remembers the links already handed to storage, so that they cost nothing more.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from ada_url import join_url, normalize_url
from yarl import URL

from crawler.errors import BadUrlError

MAX_URL_LENGTH = 2048
CRAWLABLE_SCHEMES = frozenset({"http", "https"})
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
RESOLVED_MEMORY = 2**14  # (place, href) answers a LinkResolver keeps, per generation
KNOWN_URLS_MEMORY = 2**16  # URLs KnownUrls keeps, per generation (9 MB for both, full)

# what the URL Standard strips from both ends of an input: C0 controls and space
_C0_AND_SPACE = "".join(map(chr, range(0x21)))
# a scheme: a letter, then letters, digits, `+`, `-` or `.`, and the colon
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
# a fragment that cannot make the URL bad, whatever the page: the page itself
_PLAIN_FRAGMENT = re.compile(r"#[\w.~!$&'()*+,;=:@/?\-]*\Z", re.ASCII)
# an authority of a host and a port at most (no userinfo, no IPv6)
_HOST_AND_PORT = r"//[A-Za-z0-9.\-]+(?::[0-9]*)?"
_PLAIN_AUTHORITY = re.compile(rf"{_HOST_AND_PORT}(?=[/?#]|\Z)")
# a relative path that the standard and canonicalize leave as it is, after its leading ../
_PLAIN_RELATIVE = re.compile(r"((?:\.\./)*)([\w~!$&'()*+,=@\-][\w.~!$&'()*+,=@/\-]*)\Z", re.ASCII)
# the authority of an absolute URL or a network-path reference, as written
_AUTHORITY = re.compile(r"(?:[A-Za-z][A-Za-z0-9+.\-]*:)?//([^/?#]*)")
# where the path starts in `/path` or `//host/path` (a port at most): what follows it
_ROOTED = re.compile(rf"(?:{_HOST_AND_PORT})?/")
_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


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


def canonicalize(raw: str, base: URL | None = None) -> URL:
    """The canonical absolute form of `raw` (resolved against `base` if relative): a URL
    the URL Standard reads, or BadUrlError."""
    return URL(canonical(raw, None if base is None else str(base)), encoded=True)


def canonical(raw: str, base: str | None = None) -> str:
    """`canonicalize` as a string, `base` a URL as a string."""
    raw = raw.strip(_C0_AND_SPACE)
    if not raw:
        raise BadUrlError("empty URL")
    if len(raw) > MAX_URL_LENGTH:
        raise BadUrlError(f"URL longer than {MAX_URL_LENGTH} characters")
    try:
        href = normalize_url(raw) if base is None else join_url(base, raw)
    except ValueError as error:
        if not _authority(raw) and _AUTHORITY.match(raw):
            raise BadUrlError("URL has no host") from error
        raise BadUrlError(f"unparseable URL: the URL Standard rejects {raw!r}") from error
    url = _crawler_form(href)
    if len(url) > MAX_URL_LENGTH:
        raise BadUrlError(f"URL longer than {MAX_URL_LENGTH} characters")
    return url


def _crawler_form(href: str) -> str:
    """The crawler's form of an href the standard serialised: an http(s) URL without
    fragment, empty query or session ids, its escapes normalised. In that form a `#` can
    only start the fragment, a `?` the query, and the first `/` after `//` the path."""
    scheme = href[: href.find(":")]
    if scheme not in CRAWLABLE_SCHEMES:
        raise BadUrlError(f"not an http(s) URL: scheme {scheme!r}")
    href = href.split("#", 1)[0]
    path_at = href.index("/", len(scheme) + 3)
    path, _, query = href[path_at:].partition("?")
    path = _normal_escapes(_without_path_session(path))
    query = _normal_escapes(_without_query_session(query))
    return f"{href[:path_at]}{path}?{query}" if query else f"{href[:path_at]}{path}"


def _normal_escapes(part: str) -> str:
    """`part` with the escapes of unreserved characters decoded and the others upper-cased."""
    return _ESCAPE.sub(_normal_escape, part) if "%" in part else part


def _normal_escape(escape: re.Match[str]) -> str:
    char = chr(int(escape.group()[1:], 16))
    return char if char in _UNRESERVED else escape.group().upper()


def _authority(raw: str) -> str:
    """The authority written in `raw`, empty if it has none (a relative reference)."""
    found = _AUTHORITY.match(raw)
    return found.group(1) if found else ""


class LinkResolver:
    """`canonicalize(href, base)` as a string (None for a bad URL), for the hrefs of page
    after page, each distinct href resolved once for all the bases it means the same
    against, as the URL Standard resolves it: a relative path against the base's origin
    and directory, a path against its origin, an absolute URL or `//host/` against its
    scheme. A fragment of plain characters is left out (a `#fragment` alone is the page
    itself); another scheme than http(s) is never crawlable; anything else (`?query`,
    control characters) is resolved against the whole base. The answers are kept in
    two generations of `memory` each: the oldest generation is forgotten when the
    newest fills up, and an answer used again moves to the newest.
    """

    def __init__(self, *, memory: int = RESOLVED_MEMORY) -> None:
        self.memory = memory
        self._new: dict[tuple[str, str], str | None] = {}
        self._old: dict[tuple[str, str], str | None] = {}

    def base(self, url: URL) -> Base:
        """The places in `url` that hrefs resolve against."""
        full = str(url)
        scheme = f"{url.scheme}:"
        after_scheme = full.find("//") + 2 if full.startswith(f"{scheme}//") else len(scheme)
        ends = [at for at in (full.find(c, after_scheme) for c in "/?#") if at >= 0]
        origin = full[: min(ends, default=len(full))]
        path = url.raw_path
        directory = f"{origin}{path[: path.rfind('/') + 1]}"
        return Base(url, full, scheme, origin, directory)

    def resolve(self, href: str, base: Base) -> str | None:
        found = base.answers.get(href, _MISSING)  # a page repeats a third of its hrefs
        if found is _MISSING:
            found = base.answers[href] = self._resolve(href, base)
        return found  # type: ignore[return-value]

    def _resolve(self, href: str, base: Base) -> str | None:
        href = href.strip(_C0_AND_SPACE)
        if not href.isprintable():  # the standard drops tabs and newlines anywhere
            return self._resolved(base.full, href, base)
        at = href.find("#")
        if (
            at >= 0
            and len(href) <= MAX_URL_LENGTH
            and _PLAIN_FRAGMENT.match(href, at)
            and not href[at - 1 : at].isspace()  # canonicalize would strip it
        ):
            href = href[:at]  # a plain fragment names no other page
            if not href:
                return base.itself()
        if not href:
            return None
        first = href[0]
        if first == "?":
            context = base.full
        elif first == "/":
            if not href.startswith("//"):
                return self._rooted(base.origin, href, 0, base)
            if not _has_host(href, 0):
                return self._resolved(base.full, href, base)
            return self._rooted(base.scheme, href, 0, base)
        elif ":" in href and (scheme := _SCHEME.match(href)) is not None:
            name = scheme.group().lower()
            if name not in ("http:", "https:"):
                return None  # never the base's scheme: an absolute URL, not crawlable
            if not _has_host(href, scheme.end()):
                return self._resolved(base.full, href, base)
            return self._rooted(base.scheme, href, scheme.end(), base)
        elif first == "#":
            context = base.full
        else:
            return self._resolved(base.directory, href, base, relative=True)
        return self._resolved(context, href, base)

    def _resolved(
        self, context: str, href: str, base: Base, *, relative: bool = False
    ) -> str | None:
        key = (context, href)
        found = self._new.get(key, _MISSING)
        if found is not _MISSING:
            return found  # type: ignore[return-value]
        if key in self._old:
            resolved = self._old[key]
        else:
            resolved = self._joined(href, base) if relative else _canonical(href, base.full)
        self._new[key] = resolved
        if len(self._new) >= self.memory:
            self._old, self._new = self._new, {}
        return resolved

    def _rooted(self, context: str, href: str, at: int, base: Base) -> str | None:
        """A path from a root (`/path`, `//host/path`, `http://host/path`), `at` where
        the host or path starts: a plain path (no dot segment, nothing to quote, no
        session parameter, no query) is its root's canonical URL and the path, as the
        canonical URL of `x` there shows; the parser resolves the others. On a large web
        most links are new, and many absolute: this costs a dictionary look-up, not a
        parse and a canonical form."""
        root = _ROOTED.match(href, at)
        if root is not None and len(href) <= MAX_URL_LENGTH:
            path = href[root.end() :]
            plain = _PLAIN_RELATIVE.match(path)
            if plain is not None and not plain.group(1) and "/." not in path and "//" not in path:
                model = self._resolved(context, f"{href[: root.end()]}x", base)
                if model is not None and model.endswith("x"):
                    joined = f"{model[:-1]}{path}"
                    if len(joined) <= MAX_URL_LENGTH:
                        return joined
        return self._resolved(context, href, base)

    def _joined(self, href: str, base: Base) -> str | None:
        """A relative path: a plain one (no dot segment but leading `../`, nothing to
        quote, no session parameter) is its directory's canonical URL and the path,
        as the canonical URL of `x` there shows; the parser resolves the others."""
        plain = _PLAIN_RELATIVE.match(href)
        if plain is not None:
            up, rest = plain.groups()
            if "/." not in rest and "//" not in rest:
                model = self._resolved(base.directory, f"{up}x", base)
                if model is not None and model.endswith("x"):
                    joined = f"{model[:-1]}{rest}"
                    if len(joined) <= MAX_URL_LENGTH:
                        return joined
        return _canonical(href, base.full)


_MISSING = object()


def _has_host(href: str, at: int) -> bool:
    """Whether `href` names a plain host at `at` (`//host`, a port at most): one with
    userinfo, brackets or no host (`//`, `//@`) goes to the parser with the whole base."""
    return _PLAIN_AUTHORITY.match(href, at) is not None


def _canonical(href: str, base: str) -> str | None:
    try:
        return canonical(href, base)
    except BadUrlError:
        return None


@dataclass(slots=True)
class Base:
    """A page's base URL, and the places in it that hrefs resolve against."""

    url: URL
    full: str
    scheme: str
    origin: str
    directory: str
    _itself: str | object | None = _MISSING
    answers: dict[str, str | None] = field(default_factory=dict)  # by href, as written

    def itself(self) -> str | None:
        """The canonical URL of the page itself, as a link to `#fragment` names it."""
        if self._itself is _MISSING:
            self._itself = _canonical("#", self.full)
        return self._itself  # type: ignore[return-value]


class KnownUrls:
    """URLs the collection certainly holds (links handed to storage), so that a link to
    one is dropped before it is counted, scored or written: it cannot be new.

    Bounded: two generations of `memory` URLs each, the oldest forgotten when the newest
    fills up, a URL seen again moved to the newest (a site's navigation stays). A URL
    forgotten costs what it did without this memory: the database, the authority on
    what is known, finds it there. The URLs are kept as Python's 64-bit string hashes,
    so a new URL is taken for a known one about once in 2**64 / (2 * memory) lookups.
    """

    def __init__(self, *, memory: int = KNOWN_URLS_MEMORY) -> None:
        self.memory = memory
        self._new: set[int] = set()
        self._old: set[int] = set()

    def add(self, url: str) -> None:
        self._new.add(hash(url))
        if len(self._new) >= self.memory:
            self._old, self._new = self._new, set()

    def __contains__(self, url: object) -> bool:
        if not isinstance(url, str):
            return False
        key = hash(url)
        if key in self._new:
            return True
        if key in self._old:
            self._new.add(key)
            if len(self._new) >= self.memory:
                self._old, self._new = self._new, set()
            return True
        return False


def _without_path_session(path: str) -> str:
    """/shop;jsessionid=ABC/item -> /shop/item"""
    if ";" not in path:
        return path
    segments = []
    for segment in path.split("/"):
        name, _, parameter = segment.partition(";")
        key = parameter.split("=", 1)[0].lower()
        segments.append(name if parameter and key in SESSION_PARAMETERS else segment)
    return "/".join(segments)


def _without_query_session(query: str) -> str:
    """The query without session ids and tracking parameters (`_stripped`)."""
    if not query:
        return query
    stripped = _stripped.match
    kept = [pair for pair in query.split("&") if not stripped(pair.partition("=")[0])]
    return "&".join(kept)


def host_key(url: URL) -> str:
    """The politeness and robots.txt unit: host and explicit non-default port."""
    host = url.raw_host or ""
    if url.explicit_port is not None and not url.is_default_port():
        return f"{host}:{url.port}"
    return host
