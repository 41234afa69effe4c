"""Parsing an HTML page with selectolax: title, text, links with anchor text.

`analyze` is a function of the body: it also counts the page's and links' terms
(stateless hashing), leaving only the cheap, stateful TF-IDF weighting to the processor.
Given the URLs known already (`crawler.net.known_urls.KnownUrls`), it leaves links to them out
before reading their text or counting it, and lists them (a relevant page raises those
still queued: `crawler.process.processor`); given the crawl's scope
(`crawler.net.scope.LinkScope`), it leaves out the links beyond it, and names each link's
host. A `LinkResolver` kept from page to page resolves each distinct href once.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable, Container
from dataclasses import dataclass

from selectolax.lexbor import LexborHTMLParser, LexborNode
from yarl import URL

from crawler.errors import ContentError
from crawler.net.scope import LinkScope
from crawler.net.urls import BadUrlError, LinkResolver, canonicalize, host_key
from crawler.process import canonical
from crawler.process.encoding import UTF_16BE, UTF_16LE, decoded, sniff
from crawler.process.language import detect_language
from crawler.process.main_text import main_text
from crawler.process.near_duplicates import simhash
from crawler.process.nesting import cap_nesting
from policies.terms import TermCounts, TermHasher, link_text

MAX_LINKS = 5_000  # links kept from one page
MAX_TEXT_CHARS = 200_000  # text kept from one page
MAX_ANCHOR_CHARS = 200
MAX_AROUND_CHARS = 160
MAX_HEADINGS_CHARS = 300
ITEM_TAGS = frozenset({"li", "tr", "dt", "dd"})  # an entry of a list, table or glossary
ITEM_DEPTH = 4  # levels above a link where its entry is looked for
MAX_ROW_CHARS = 400  # a table row longer than this is a page's layout, not an entry
SNIFF_BYTES = 4096  # where NUL bytes mark a binary body


@dataclass(frozen=True, slots=True)
class Link:
    url: str
    anchor: str
    around: str = ""  # the text of the link's item or block, for the frontier policy
    host: str = ""  # the politeness unit (`host_key`)


@dataclass(frozen=True, slots=True)
class PageAnalysis:
    title: str | None
    text: str  # the main text (`crawler.process.main_text`)
    links: tuple[Link, ...]
    noindex: bool
    nofollow: bool
    counts: TermCounts  # the terms of the page (row 0), of each link, of each link's context
    headings: str = ""  # the title and h1-h2 headings, for the frontier policy
    # links left out as known: distinct URLs in the page's order, not in `links` (links
    # out of scope are in neither)
    known_links: tuple[str, ...] = ()
    fingerprint: str = ""  # a hash of the body, which tells a later visit it changed
    # the main text's SimHash, which finds near-duplicates (`crawler.process.near_duplicates`)
    simhash: int | None = None
    language: str | None = None  # of the main text, ISO 639-1 (`crawler.process.language`)
    # the canonical URL the page declares (`crawler.process.canonical`), if one
    canonical: str | None = None

    @property
    def known(self) -> int:
        return len(self.known_links)


def decode(body: bytes, header_charset: str | None) -> str:
    """Text of an HTML body, in the encoding the HTML standard's sniffing finds
    (`crawler.process.encoding`): a byte order mark, the header's charset, a <meta>."""
    name, start = sniff(body, header_charset)
    # NUL bytes mark a binary body, but in UTF-16, where every ASCII character has one
    if name not in (UTF_16LE, UTF_16BE) and b"\x00" in body[:SNIFF_BYTES]:
        raise ContentError("binary body (NUL bytes)")
    return decoded(body, name, start)


def _robots_directives(value: str | None) -> set[str]:
    if not value:
        return set()
    return {part.strip().lower() for part in value.split(",")}


def analyze(
    body: bytes,
    *,
    url: str,
    charset: str | None,
    x_robots_tag: str | None,
    counter: TermHasher,
    link: str | None = None,
    resolver: LinkResolver | None = None,
    known: Container[str] = frozenset(),
    scope: LinkScope | None = None,
    depth: int = 0,
) -> PageAnalysis:
    """The page's title, text, links, term counts and declared canonical URL (in its
    head, or its `link` header). `depth` is its links' depth, for `scope`; without a
    scope every link is kept."""
    html = decode(body, charset)
    tree = LexborHTMLParser(cap_nesting(html))

    directives = _robots_directives(x_robots_tag)
    for meta in tree.css("meta[name]"):
        if (meta.attributes.get("name") or "").strip().lower() == "robots":
            directives |= _robots_directives(meta.attributes.get("content"))
    noindex = bool(directives & {"noindex", "none"})
    nofollow = bool(directives & {"nofollow", "none"})

    title_node = tree.css_first("title")
    title = _clean(title_node.text()) if title_node is not None else None

    base = URL(url, encoded=True)
    base_node = tree.css_first("base[href]")
    if base_node is not None:
        with contextlib.suppress(BadUrlError):
            base = canonicalize(base_node.attributes.get("href") or "", base=base)

    resolver = resolver or LinkResolver()
    resolve, page_base = resolver.resolve, resolver.base(base)
    declared = canonical.declared(tree.head, page_base, resolve, link=link, url=url)
    links: dict[str, Link] = {}
    left_out: dict[str, None] = {}  # known, in order: they count towards MAX_LINKS as they did
    outside: set[str] = set()  # beyond the scope: so do they
    # each node's text once: a block of thousands of links would cost its text each time
    text_of: dict[int, str] = {}
    host_of = _hosts_in(scope, depth)
    if not nofollow and host_of is not None:
        for anchor in tree.css("a[href]"):
            attributes = anchor.attributes
            rel = attributes.get("rel")
            if rel and "nofollow" in rel.lower().split():
                continue
            target = resolve(attributes.get("href") or "", page_base)
            if target is None or target in links or target in left_out or target in outside:
                continue
            if target in known:
                left_out[target] = None
            elif (host := host_of(target)) is None:
                outside.add(target)
            else:
                around = _link_context(anchor, text_of)
                anchor_text = _clean(anchor.text())[:MAX_ANCHOR_CHARS]
                links[target] = Link(target, anchor_text, around, host)
            if len(links) + len(left_out) + len(outside) >= MAX_LINKS:
                break

    headings = " ".join([title or "", *(_clean(node.text()) for node in tree.css("h1, h2")[:8])])[
        :MAX_HEADINGS_CHARS
    ]
    tree.strip_tags(["script", "style", "noscript", "template"])
    body_node = tree.body
    # relevance is scored on the whole body's text; the collection keeps the main text,
    # or the whole text of a page that is all navigation (a site map)
    whole = _clean(body_node.text(separator=" ")) if body_node is not None else ""
    whole = whole[:MAX_TEXT_CHARS]
    text = main_text(tree)[:MAX_TEXT_CHARS] or whole

    link_list = tuple(links.values())
    # one call for the page and its links: the vectorizer's overhead is per call
    counts = counter.count(
        [
            f"{title or ''} {whole}",
            *(link_text(link.anchor, link.url) for link in link_list),
            *(link.around for link in link_list),
        ]
    )
    return PageAnalysis(
        title,
        text,
        link_list,
        noindex,
        nofollow,
        counts,
        headings.strip(),
        tuple(left_out),
        body_fingerprint(body),
        simhash(text),
        detect_language(text),
        canonical=declared,
    )


def body_fingerprint(body: bytes) -> str:
    """A short hash of a page's body: a later visit's differs if the body changed."""
    return hashlib.blake2b(body, digest_size=8).hexdigest()


def _hosts_in(scope: LinkScope | None, depth: int) -> Callable[[str], str | None] | None:
    """A link's host if it is in scope, else None; None if no link is, at `depth`."""
    if scope is None:
        return lambda url: host_key(URL(url, encoded=True))
    if not scope.scope.allows_depth(depth):
        return None
    return lambda url: scope.host(url, depth)


def _link_context(anchor: LexborNode, text_of: dict[int, str]) -> str:
    """A link's context: the entry of a list, table or glossary it is in (a table row or a
    term holds the description beside a link, as an index of a site's pages does), else
    the block it sits in. A table row longer than `MAX_ROW_CHARS` is a page's layout (its
    columns) rather than an entry."""
    block = anchor.parent
    if block is None:
        return ""
    node: LexborNode | None = block
    for _ in range(ITEM_DEPTH):
        if node is None:
            break
        if node.tag in ITEM_TAGS:
            text = _text(node, text_of)
            if node.tag != "tr" or len(text) <= MAX_ROW_CHARS:
                return text[:MAX_AROUND_CHARS]
            break
        node = node.parent
    return _text(block, text_of)[:MAX_AROUND_CHARS]


def _text(node: LexborNode, text_of: dict[int, str]) -> str:
    """A node's text, its cells and elements apart, once a page; a glossary term's with
    its definition's."""
    text = text_of.get(node.mem_id)
    if text is None:
        text = node.text(separator=" ")
        if node.tag == "dt":
            sibling = node.next
            while sibling is not None and sibling.tag not in ("dt", "dd"):
                sibling = sibling.next
            if sibling is not None and sibling.tag == "dd":
                text = f"{text} {sibling.text(separator=' ')}"
        text = text_of[node.mem_id] = _clean(text)
    return text


def _clean(text: str | None) -> str:
    """Runs of white space made one space, none at the ends (as re's \\s+, in C)."""
    return " ".join(text.split()) if text else ""
