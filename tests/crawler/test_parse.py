from __future__ import annotations

import pytest

from crawler.net.scope import LinkScope, Scope
from crawler.process.nesting import cap_nesting
from crawler.process.parse import ContentError, analyze, decode
from policies.terms import TermHasher

COUNTER = TermHasher(n_features=2**12)


def parse(html: str | bytes, *, url: str = "http://site.example/dir/page", **kwargs: object):
    body = html.encode() if isinstance(html, str) else html
    options: dict[str, object] = {"charset": None, "x_robots_tag": None}
    options.update(kwargs)
    return analyze(body, url=url, counter=COUNTER, **options)  # type: ignore[arg-type]


def test_title_text_and_links_with_anchor_text() -> None:
    page = parse(
        "<html><head><title>  Solar\n power </title><style>.x{}</style></head><body>"
        "<script>var hidden = 1;</script><p>Panels  on roofs.</p>"
        '<a href="a.html#top">First <b>link</b></a> <a href="/b">Second</a>'
        '<a href="a.html">dup</a><a href="mailto:x@y">mail</a></body></html>'
    )
    assert page.title == "Solar power"
    assert "Panels on roofs." in page.text
    assert "hidden" not in page.text
    assert ".x" not in page.text
    assert [(link.url, link.anchor) for link in page.links] == [
        ("http://site.example/dir/a.html", "First link"),
        ("http://site.example/b", "Second"),
    ]
    assert page.counts.rows == 5  # the page, its two links, their two contexts


def test_a_pages_fingerprint_changes_with_any_byte_of_its_body() -> None:
    """What tells a later visit that the page changed: the same body, the same
    fingerprint, whatever the URL; a byte more, another one."""
    body = "<html><body><p>Panels on roofs.</p></body></html>"
    first = parse(body).fingerprint
    assert len(first) == 16
    assert parse(body, url="http://other.example/").fingerprint == first
    assert parse(body.replace("roofs", "roofs!")).fingerprint != first
    assert parse(body + " ").fingerprint != first  # the same text and links, another body


def test_links_beyond_the_scope_are_left_out_before_they_are_counted() -> None:
    html = (
        '<a href="/in">In</a> <a href="http://other.example/out">Out</a>'
        '<a href="http://docs.site.example:8080/sub">Sub</a> <a href="a/b/a/b/a/b">Trap</a>'
    )
    scope = LinkScope(Scope.of({"site.example"}, max_depth=3))
    page = parse(html, scope=scope, depth=3)
    assert [(link.url, link.host) for link in page.links] == [
        ("http://site.example/in", "site.example"),
        ("http://docs.site.example:8080/sub", "docs.site.example:8080"),
    ]
    assert page.known == 0  # left out as beyond the scope, not as known
    assert page.counts.rows == 5  # the page, two links, two contexts
    too_deep = parse(html, scope=scope, depth=4)
    assert too_deep.links == ()
    assert too_deep.counts.rows == 1


def test_a_links_context_is_its_entry_in_a_table_list_or_glossary() -> None:
    # the index pages of documentation: the description sits beside the link, in the
    # row's next cell or the term's definition, not in the block around the anchor
    page = parse(
        "<table><tr><td><p><a href='fft.html'><code>fft</code></a>(x, n)</p></td>"
        "<td><p>Compute the discrete Fourier transform.</p></td></tr></table>"
        "<dl><dt><a href='git-merge.html'>git-merge(1)</a></dt>"
        "<dd><p>Join two or more development histories together.</p></dd>"
        "<dt><a href='git-log.html'>git-log(1)</a></dt><dd>Show commit logs.</dd></dl>"
        "<ul><li><span><a href='guide.html'>Guide</a></span> for beginners</li></ul>"
        "<p>Read <a href='intro.html'>the introduction</a> first.</p>"
        "<div><a href='alone.html'>Alone</a></div>"
        # a page laid out in a table: the row is the page's columns, not an entry
        f"<table><tr><td><p><a href='home.html'>Home</a></p></td><td>{'Solar panels. ' * 40}"
        "</td></tr></table>"
    )
    assert [link.around for link in page.links] == [
        "fft (x, n) Compute the discrete Fourier transform.",
        "git-merge(1) Join two or more development histories together.",
        "git-log(1) Show commit logs.",
        "Guide for beginners",
        "Read the introduction first.",
        "Alone",
        "Home",
    ]


def test_base_href_changes_where_relative_links_point() -> None:
    page = parse('<head><base href="http://other.example/root/"></head><a href="x">x</a>')
    assert [link.url for link in page.links] == ["http://other.example/root/x"]


def test_rel_nofollow_links_are_skipped() -> None:
    page = parse('<a href="/a" rel="nofollow">a</a><a href="/b" rel="external">b</a>')
    assert [link.url for link in page.links] == ["http://site.example/b"]


@pytest.mark.parametrize(
    ("meta", "header", "noindex", "nofollow"),
    [
        ('<meta name="robots" content="NOINDEX">', None, True, False),
        ('<meta name="Robots" content="nofollow, noarchive">', None, False, True),
        ('<meta name="robots" content="none">', None, True, True),
        ("", "noindex, nofollow", True, True),
        ('<meta name="description" content="noindex">', None, False, False),
    ],
)
def test_meta_robots_and_x_robots_tag(
    meta: str, header: str | None, noindex: bool, nofollow: bool
) -> None:
    page = parse(f"<head>{meta}</head><body><a href='/x'>x</a></body>", x_robots_tag=header)
    assert (page.noindex, page.nofollow) == (noindex, nofollow)
    assert len(page.links) == (0 if nofollow else 1)


def test_charset_from_the_header_then_meta_then_the_fallback() -> None:
    latin = "<title>café</title>".encode("latin-1")
    assert "café" in decode(latin, "iso-8859-1")
    assert "café" in decode(b'<meta charset="latin1">' + latin, None)
    assert "café" in decode(latin, None)  # not UTF-8: windows-1252, as browsers fall back
    assert "caf\ufffd" in decode(latin, "utf-8")  # undecodable bytes are replaced, not fatal
    assert "café" in decode("<p>café</p>".encode(), "no-such-charset")


def test_a_binary_body_is_refused() -> None:
    with pytest.raises(ContentError, match="binary"):
        parse(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")


def test_malformed_and_deeply_nested_html_still_parses() -> None:
    page = parse("<div>" * 5000 + "<a href='/deep'>deep</a><p>unclosed <b>text")
    assert [link.url for link in page.links] == ["http://site.example/deep"]
    assert "unclosed text" in page.text


def test_white_space_of_every_kind_is_one_space() -> None:
    page = parse("<title>\u00a0Solar\u2003 \tpower\u3000</title><p>a\u2028\u2029 b\x1c</p>")
    assert page.title == "Solar power"
    assert page.text == "a b"


def test_nesting_deeper_than_the_cap_is_flattened_keeping_text_and_links() -> None:
    deep = "<div>" * 20 + "<a href='/x'>inside</a>" + "</div>" * 20 + "<p>after"
    capped = cap_nesting(deep, limit=5, count_above=0)
    assert capped == "<div>" * 5 + "<a href='/x'>inside</a>" + "</div>" * 5 + "<p>after"
    # elements that close themselves, and void ones, do not count
    flat = "<ul>" + "<li><img src=i.png><p>entry" * 50 + "</ul>"
    assert cap_nesting(flat, limit=5, count_above=0) == flat
    assert cap_nesting(deep, limit=5) == deep  # too few start tags to be worth counting


def test_a_page_of_thirty_thousand_unclosed_lists_parses_with_its_links() -> None:
    """Left open, each list nests in the one before: the parser's cost would grow with
    the square of their number (seconds for this page, hours for 5 MB of them), and a page
    nested so deep must not stop a crawl."""
    body = "<title>deep</title>" + "<ul><li><a href='/y'>solar</a>" * 30_000 + "<p>the end"
    page = parse(body)
    assert [link.url for link in page.links] == ["http://site.example/y"]
    assert page.text.endswith("solar the end")


@pytest.mark.parametrize("label", ["base64", "rot13", "zlib_codec", "hex", "idna", "undefined"])
def test_a_codec_that_is_not_a_text_encoding_is_an_unknown_label(label: str) -> None:
    body = "<p>café</p>".encode()
    assert decode(body, label) == "<p>café</p>"
    assert decode(f'<meta charset="{label}"><p>café</p>'.encode(), None).endswith("café</p>")
    assert parse(body, charset=label).text == "café"
