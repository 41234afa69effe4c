from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from yarl import URL

from crawler.net import urls
from crawler.net.known_urls import KnownUrls
from crawler.net.urls import (
    MAX_URL_LENGTH,
    BadUrlError,
    LinkResolver,
    canonicalize,
    host_key,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("HTTP://ExAmple.COM:80/a/./b/../c?x=1#frag", "http://example.com/a/c?x=1"),
        ("https://example.com:443", "https://example.com/"),
        ("http://example.com:8080/%7Euser/", "http://example.com:8080/~user/"),
        ("http://example.com/a b", "http://example.com/a%20b"),
        ("http://bücher.example/", "http://xn--bcher-kva.example/"),
        ("  http://example.com/x  ", "http://example.com/x"),
    ],
)
def test_one_page_has_one_canonical_form(raw: str, expected: str) -> None:
    assert str(canonicalize(raw)) == expected


def test_relative_links_resolve_against_the_base() -> None:
    base = URL("http://example.com/dir/page.html")
    assert str(canonicalize("../other#top", base=base)) == "http://example.com/other"
    assert str(canonicalize("?q=1", base=base)) == "http://example.com/dir/page.html?q=1"
    assert str(canonicalize("//cdn.example.com/x", base=base)) == "http://cdn.example.com/x"


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("", "empty"),
        ("mailto:someone@example.com", "scheme 'mailto'"),
        ("javascript:void(0)", "scheme 'javascript'"),
        ("ftp://example.com/file", "scheme 'ftp'"),
        ("data:text/html,hi", "scheme 'data'"),
        ("http://", "no host"),
        ("http://example.com/" + "a" * MAX_URL_LENGTH, "longer than"),
        ("http://[::1", "unparseable"),
        ("http://][@a@/", "unparseable"),
    ],
)
def test_uncrawlable_urls_say_why(raw: str, reason: str) -> None:
    with pytest.raises(BadUrlError, match=reason):
        canonicalize(raw)


UNREADABLE_HOSTS = [
    "[::1.]",
    "[::.1]",
    "[::1.2.]",
    "[::127.0.0.1.]",
    "[0:1:2:3:4:5:6:7:8]",
    "[:::]",
    "[fe80::1%25eth0]",  # a zone names an interface of the machine that reads it
    "[v1.site.example]",  # IPvFuture: no address at all, nor the name inside it
]


@pytest.mark.parametrize("host", UNREADABLE_HOSTS)
def test_a_host_in_brackets_that_is_no_ipv6_address_makes_a_bad_url(host: str) -> None:
    base = URL("http://site.example/dir/")
    for raw in (f"http://{host}/", f"https://{host}:8080/x?q=1", f"//{host}/x"):
        with pytest.raises(BadUrlError):
            canonicalize(raw, base=base)
    resolver = LinkResolver()
    assert resolver.resolve(f"http://{host}/", resolver.base(base)) is None
    assert resolver.resolve(f"//{host}/x", resolver.base(base)) is None


@pytest.mark.parametrize(
    ("raw", "canonical", "port"),
    [
        ("http://[::1]/", "http://[::1]/", 80),
        ("http://[2001:DB8::1]:8080/x", "http://[2001:db8::1]:8080/x", 8080),
        ("https://[::FFFF:1.2.3.4]:443/", "https://[::ffff:102:304]/", 443),
    ],
)
def test_an_ipv6_host_has_one_canonical_form(raw: str, canonical: str, port: int) -> None:
    url = canonicalize(raw)
    assert (str(url), url.port) == (canonical, port)
    assert canonicalize(str(url)) == url


def test_host_key_keeps_only_non_default_ports() -> None:
    assert host_key(canonicalize("http://Example.com:80/")) == "example.com"
    assert host_key(canonicalize("http://127.0.0.1:8080/")) == "127.0.0.1:8080"
    assert host_key(canonicalize("https://example.com:8443/")) == "example.com:8443"


def test_an_ipv6_host_with_a_port_is_not_another_address() -> None:
    with_port = host_key(canonicalize("http://[::1]:8080/"))
    address = host_key(canonicalize("http://[::1:8080]/"))
    assert with_port == "[::1]:8080"
    assert address == "::1:8080"
    assert host_key(canonicalize("http://[::1]/")) == "::1"


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        ("http://a.test/shop;jsessionid=AB12/item", "http://a.test/shop/item"),
        ("http://a.test/p?sid=9&x=1", "http://a.test/p?x=1"),
        ("http://a.test/p?PHPSESSID=9", "http://a.test/p"),
        ("http://a.test/p?side=9", "http://a.test/p?side=9"),  # only whole names
        ("http://a.test/p;v=2", "http://a.test/p;v=2"),  # other path parameters stay
    ],
)
def test_session_ids_are_not_part_of_the_address(raw: str, canonical: str) -> None:
    assert str(canonicalize(raw)) == canonical


_BASES = [
    "http://site.example/dir/page.html",
    "http://site.example/dir/other.html?q=1#top",
    "http://site.example/dir/",
    "http://site.example",
    "https://site.example/dir/page.html",
    "http://user:pw@Site.Example:8080/dir/page.html",
    "http://site.example/a%2Fb/c%20d.html",
    "http://site.example/a%2Fb/",
    "http://site.example/x/a%2Fb",
    "http://site.example/dir;jsessionid=1/./page.html",
    "http://site.example/dir/../up/page",
]
_HREF_PIECES = st.sampled_from(
    ["", "#", "#x", "#%3Cinit%3E()", "#a b", "?q=1", "/", "//", "//other.example/x", "http:",
     "https:", "http://other.example/", "HTTP://Other.Example/a", "mailto:x@y", "javascript:0",
     "1a:b", "a", "b.html", ".", "..", "/", "%2F", "%20", " ", "\t", "\n", "\x01", "\\", "é",
     ";jsessionid=2", ";x=1", ":", "sid=3", "&", "=", "?", "#", "@", "[", "]", "..%2F", "~(1)+",
     "HTTP://Other.Example:80/", "//127.0.0.2:8080/", ":08080", "p/1", "//[::1]:8080/",
     "http://[::1.]/", "//[:::]"]
)  # fmt: skip
_HREFS = st.lists(_HREF_PIECES, max_size=5).map("".join)


def _canonical(href: str, base: URL) -> str | None:
    try:
        return str(canonicalize(href, base=base))
    except BadUrlError:
        return None


@given(st.lists(st.tuples(st.sampled_from(_BASES), _HREFS), max_size=40), st.sampled_from([2, 64]))
@example([(_BASES[0], "//@"), (_BASES[1], "//@"), (_BASES[0], "?q=1 #"), (_BASES[2], "b#x")], 2)
def test_a_resolver_answers_as_canonicalize_does(links: list[tuple[str, str]], memory: int) -> None:
    # one resolver for page after page: an answer kept for one base must be right for all
    resolver = LinkResolver(memory=memory)
    for base_url, href in links * 2:
        base = URL(base_url, encoded=True)
        assert resolver.resolve(href, resolver.base(base)) == _canonical(href, base), (
            base_url,
            href,
        )


def test_a_resolver_asks_the_parser_once_for_a_directory(monkeypatch: pytest.MonkeyPatch) -> None:
    asked = []

    def canonical(href: str, base: URL) -> str | None:
        asked.append(href)
        return _canonical(href, base)

    monkeypatch.setattr(urls, "_canonical", canonical)
    resolver = LinkResolver()
    first = resolver.base(URL("http://site.example/dir/a.html"))
    second = resolver.base(URL("http://site.example/dir/b.html?x=1"))
    assert resolver.resolve("../up.html", first) == "http://site.example/up.html"
    assert resolver.resolve("../up.html", second) == "http://site.example/up.html"
    assert resolver.resolve("../down/a.html#x", second) == "http://site.example/down/a.html"
    assert resolver.resolve("#part", second) == "http://site.example/dir/b.html?x=1"
    assert resolver.resolve("mailto:x@y", second) is None
    assert resolver.resolve("c%20d.html", second) == "http://site.example/dir/c%20d.html"
    # the plain paths of a directory follow from the canonical URL of one
    assert asked == ["../x", "#", "c%20d.html"]


def test_known_urls_remember_the_last_used_within_their_memory() -> None:
    known = KnownUrls(memory=2)
    known.add("http://a.example/")
    known.add("http://b.example/")  # the first generation is full: it becomes the old one
    assert "http://a.example/" in known  # used again: moved to the newest generation
    known.add("http://c.example/")  # full again: b's generation is forgotten
    assert "http://a.example/" in known
    assert "http://c.example/" in known
    assert "http://b.example/" not in known
    assert 1 not in known


# The URL Standard's reading of what browsers meet in links (web-platform-tests' cases)
STANDARD = [
    # (href, base, canonical URL)
    ("\\x", "http://example.org/foo/bar", "http://example.org/x"),  # a backslash is a slash
    ("http:\\\\www.google.com\\foo", None, "http://www.google.com/foo"),
    ("\\\\server\\file", "http://example.org/foo/bar", "http://server/file"),
    ("http://0xffffffff", None, "http://255.255.255.255/"),  # IPv4 numbers in any form
    ("http://192.168.257", None, "http://192.168.1.1/"),
    ("http://0x7f.1/x", None, "http://127.0.0.1/x"),
    ("http://0300.0250.0.1/", None, "http://192.168.0.1/"),
    ("https:/example.com/", None, "https://example.com/"),  # one slash is enough
    ("https:/example.com/", "http://example.org/foo/bar", "https://example.com/"),
    ("///test", "http://example.org/foo/bar", "http://test/"),  # three are too
    ("https://%e2%98%83", None, "https://xn--n3h/"),  # an escaped host to punycode
    ("http://example.com/foo%", None, "http://example.com/foo%"),  # a stray % stays
    ("http://example.com/%zz%41", None, "http://example.com/%zzA"),
    ("http://example.com/?a b", None, "http://example.com/?a%20b"),  # spaces in a query
    ("?q=a b", "http://example.org/foo/bar", "http://example.org/foo/bar?q=a%20b"),
    ("h\tt\ntp://example.com/a\tb", None, "http://example.com/ab"),  # tabs, newlines dropped
    ("1a:b", "http://example.org/foo/bar", "http://example.org/foo/1a:b"),  # no scheme
    ("http://example.com/a/%2e%2E/b", None, "http://example.com/b"),  # escaped dot segments
]


@pytest.mark.parametrize(("href", "base", "expected"), STANDARD)
def test_links_are_read_as_the_url_standard_reads_them(
    href: str, base: str | None, expected: str
) -> None:
    base_url = None if base is None else URL(base, encoded=True)
    assert str(canonicalize(href, base=base_url)) == expected
    resolver = LinkResolver()
    page = resolver.base(URL(base or "http://page.example/", encoded=True))
    if base is not None or href.startswith("http"):
        assert resolver.resolve(href, page) == expected


REJECTED = [
    "http://[1:2]/",  # never the host 1:2
    "http://[::1]x/",
    "http://a b/",
    "http://exa%00mple.com/",
    "http://example.com:65536/",
    "http://1.2.3.4.5/",  # numbers that are no IPv4 address
    "http://0x100000000/",
    "http://%zz/",
    "https://x x:12/",
    "http://ex%ample.com/",
]


@pytest.mark.parametrize("href", REJECTED)
def test_a_link_the_url_standard_rejects_is_dropped(href: str) -> None:
    with pytest.raises(BadUrlError):
        canonicalize(href)
    base = URL("http://site.example/dir/page", encoded=True)
    with pytest.raises(BadUrlError):
        canonicalize(href, base=base)
    resolver = LinkResolver()
    assert resolver.resolve(href, resolver.base(base)) is None
