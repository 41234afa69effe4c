"""URL canonicalisation, on the URL Standard's parser (Ada, through ada-url); the crawl's
scope is in `crawler.net.scope`.

An input is parsed, or resolved against its base, as browsers do (WHATWG URL: `\\` read
as `/` in http(s) URLs, IPv4 numbers in any form, hosts mapped to punycode, dot segments
resolved); one the standard rejects is a BadUrlError, never a guess. On top of the
standard's form, one page is one row: the fragment and an empty query are dropped,
escapes of unreserved characters decoded and the others upper-cased (`%7E` is `~`, `%2f`
is `%2F`), and session ids and tracking parameters removed
(`crawler.net.url_parameters`), so one page is not a thousand URLs. Only http(s) URLs
are crawlable.

A site's pages share most of their links (navigation, indexes), so a `LinkResolver`
resolves each distinct href once for every page it means the same on
(`crawler.net.known_urls` remembers the links already handed to storage).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ada_url import join_url, normalize_url
from yarl import URL

from crawler.errors import BadUrlError
from crawler.net.url_parameters import without_path_session, without_query_session

MAX_URL_LENGTH = 2048
CRAWLABLE_SCHEMES = frozenset({"http", "https"})
RESOLVED_MEMORY = 2**14  # (place, href) answers a LinkResolver keeps, per generation

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
    path = _normal_escapes(without_path_session(path))
    query = _normal_escapes(without_query_session(query))
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


def host_key(url: URL) -> str:
    """The politeness and robots.txt unit: host and explicit non-default port. An IPv6
    host with a port keeps its brackets: [::1]:8080 is not the address ::1:8080."""
    host = url.raw_host or ""
    if url.explicit_port is not None and not url.is_default_port():
        return f"[{host}]:{url.port}" if ":" in host else f"{host}:{url.port}"
    return host
