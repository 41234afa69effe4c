"""URL canonicalisation (through yarl); the crawl's scope is in `crawler.net.scope`.

One page is one row: scheme and host lower-cased, default ports and fragments dropped,
dot segments resolved, percent-encoding normalised, an empty path made "/", and session
ids (`;jsessionid=...`, `?sid=...`, ...) removed, so one page is not a thousand URLs.

A site's pages share most of their links (navigation, indexes), so a `LinkResolver`
resolves each distinct href once for every page it means the same on, and `KnownUrls`
remembers the links already handed to storage, so that they cost nothing more.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field

from yarl import URL

from crawler.errors import BadUrlError

MAX_URL_LENGTH = 2048
CRAWLABLE_SCHEMES = frozenset({"http", "https"})
SESSION_PARAMETERS = frozenset(
    {"jsessionid", "phpsessid", "aspsessionid", "sid", "sessionid", "session_id", "cfid", "cftoken"}
)
RESOLVED_MEMORY = 2**14  # (place, href) answers a LinkResolver keeps, per generation
KNOWN_URLS_MEMORY = 2**16  # URLs KnownUrls keeps, per generation (9 MB for both, full)

# what yarl reads as a scheme: the characters before the first colon, all of these
_SCHEME = re.compile(r"[A-Za-z0-9+.\-]+:")
# a fragment that cannot make the URL bad, whatever the page: the page itself
_PLAIN_FRAGMENT = re.compile(r"#[\w.~!$&'()*+,;=:@/?\-]*\Z", re.ASCII)
# an authority of a host and a port at most, which yarl keeps (no userinfo, no IPv6)
_HOST_AND_PORT = r"//[A-Za-z0-9.\-]+(?::[0-9]*)?"
_PLAIN_AUTHORITY = re.compile(rf"{_HOST_AND_PORT}(?=[/?#]|\Z)")
# a relative path that yarl and canonicalize leave as it is, after its leading ../
_PLAIN_RELATIVE = re.compile(r"((?:\.\./)*)([\w~!$&'()*+,=@\-][\w.~!$&'()*+,=@/\-]*)\Z", re.ASCII)
# the authority of an absolute URL or a network-path reference, as written
_AUTHORITY = re.compile(r"(?:[A-Za-z][A-Za-z0-9+.\-]*:)?//([^/?#]*)")
# where the path starts in `/path` or `//host/path` (a port at most): what follows it
_ROOTED = re.compile(rf"(?:{_HOST_AND_PORT})?/")


def canonicalize(raw: str, base: URL | None = None) -> URL:
    """The canonical absolute form of `raw` (resolved against `base` if relative): a URL
    whose every part yarl reads, or BadUrlError."""
    raw = raw.strip()
    if not raw:
        raise BadUrlError("empty URL")
    if len(raw) > MAX_URL_LENGTH:
        raise BadUrlError(f"URL longer than {MAX_URL_LENGTH} characters")
    try:
        url = _canonical_url(raw, base)
        length = len(str(url))  # yarl reads the port only here
    except BadUrlError:
        raise
    except (ValueError, TypeError, LookupError) as error:  # yarl's, at any step
        raise BadUrlError(f"unparseable URL: {error}") from error
    if length > MAX_URL_LENGTH:
        raise BadUrlError(f"URL longer than {MAX_URL_LENGTH} characters")
    return url


def _canonical_url(raw: str, base: URL | None) -> URL:
    url = URL(raw)
    if base is not None:
        url = base.join(url)  # an absolute URL stays as it is
    if url.scheme not in CRAWLABLE_SCHEMES:
        raise BadUrlError(f"not an http(s) URL: scheme {url.scheme or 'missing'!r}")
    if not url.raw_host:
        raise BadUrlError("URL has no host")
    _check_host(url.raw_host, raw)
    authority = url.raw_authority
    if url.explicit_port is not None and url.is_default_port():
        authority = authority.rsplit(":", 1)[0]
    return URL.build(
        scheme=url.scheme,
        authority=authority,
        path=_without_path_session(url.raw_path) or "/",
        query_string=_without_query_session(url.raw_query_string),
        encoded=True,
    )  # without the fragment


def _check_host(host: str, raw: str) -> None:
    """Raises BadUrlError for a host in brackets that is no IPv6 address, which yarl
    lets through: it fails on the URL's port later (`[::1.]`), or reads the name inside
    an IPvFuture literal (`[v1.example]`) as the host."""
    if ":" in host:
        if "%" in host:  # a zone names an interface of the machine that reads the URL
            raise BadUrlError(f"host [{host}] has a zone")
        try:
            ipaddress.IPv6Address(host)
        except ValueError as error:
            raise BadUrlError(f"host [{host}] is not an IPv6 address") from error
    elif "[" in raw and "[" in _authority(raw):
        raise BadUrlError(f"host [{host}] is not an IPv6 address")


def _authority(raw: str) -> str:
    """The authority written in `raw`, empty if it has none (a relative reference)."""
    found = _AUTHORITY.match(raw)
    return found.group(1) if found else ""


class LinkResolver:
    """`canonicalize(href, base)` as a string (None for a bad URL), for the hrefs of page
    after page, each distinct href resolved once for all the bases it means the same
    against, in yarl's `URL.join`: a relative path against the base's origin and
    directory, a path against its origin, an absolute URL or `//host/` against its
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
        # yarl joins a relative path with a base path that ends in "/" as it is, with
        # another one by its decoded segments: the directory alone does not say which
        kind = "/" if path.endswith("/") else "" if not path else "."
        directory = f"{origin}{path[: path.rfind('/') + 1]}\n{kind}"
        return Base(url, full, scheme, origin, directory)

    def resolve(self, href: str, base: Base) -> str | None:
        found = base.answers.get(href, _MISSING)  # a page repeats a third of its hrefs
        if found is _MISSING:
            found = base.answers[href] = self._resolve(href, base)
        return found  # type: ignore[return-value]

    def _resolve(self, href: str, base: Base) -> str | None:
        href = href.strip()
        if not href.isprintable():  # yarl drops tabs and newlines, and leading controls
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
            resolved = self._joined(href, base) if relative else _canonical(href, base.url)
        self._new[key] = resolved
        if len(self._new) >= self.memory:
            self._old, self._new = self._new, {}
        return resolved

    def _rooted(self, context: str, href: str, at: int, base: Base) -> str | None:
        """A path from a root (`/path`, `//host/path`, `http://host/path`), `at` where
        the host or path starts: a plain path (no dot segment, nothing to quote, no
        session parameter, no query) is its root's canonical URL and the path, as the
        canonical URL of `x` there shows; yarl resolves the others. On a large web most
        links are new, and many absolute: each would cost yarl's parse, join and build."""
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
        as the canonical URL of `x` there shows; yarl resolves the others."""
        plain = _PLAIN_RELATIVE.match(href)
        if plain is not None:
            up, rest = plain.groups()
            if "/." not in rest and "//" not in rest:
                model = self._resolved(base.directory, f"{up}x", base)
                if model is not None and model.endswith("x"):
                    joined = f"{model[:-1]}{rest}"
                    if len(joined) <= MAX_URL_LENGTH:
                        return joined
        return _canonical(href, base.url)


_MISSING = object()


def _has_host(href: str, at: int) -> bool:
    """Whether `href` names a plain host at `at` (`//host`, a port at most): yarl joins
    one without a host (`//`, `//@`) as a relative reference."""
    return _PLAIN_AUTHORITY.match(href, at) is not None


def _canonical(href: str, base: URL) -> str | None:
    try:
        return str(canonicalize(href, base=base))
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
            self._itself = _canonical("#", self.url)
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
    if not query:
        return query
    kept = [
        pair for pair in query.split("&") if pair.split("=", 1)[0].lower() not in SESSION_PARAMETERS
    ]
    return "&".join(kept)


def host_key(url: URL) -> str:
    """The politeness and robots.txt unit: host and explicit non-default port."""
    host = url.raw_host or ""
    if url.explicit_port is not None and not url.is_default_port():
        return f"{host}:{url.port}"
    return host
