"""A page's main text: its body without navigation, menus, footers and sidebars.

Rules on the lexbor tree the page was parsed into (`crawler.pipeline.parse`), chosen
on documentation as Debian ships it (Sphinx, DocBook, texinfo) and measured in
`bench/main_text.py`:
- the page's main element (`main`, `[role=main]`, Sphinx's `div.body`) when it has one
  and it holds text, else the body;
- without the elements that are navigation by their tag (`nav`, `header`, `footer`,
  `aside`), their role, the classes of the generators met (Sphinx's `div.related`,
  `div.sphinxsidebar`, `div.footer`; DocBook's `div.navheader`, `div.navfooter`;
  texinfo's `div.header`, `div.nav-panel`), or a class or id naming navigation (nav,
  menu, footer, sidebar, breadcrumb, toc);
- without the lists and tables that are mostly links (LINK_DENSITY): menus, tables of
  contents, the Prev/Up/Next tables of manuals written without those classes.

trafilatura keeps every page's body and none of its navigation on these pages too, but
costs some 34 ms a page, about fifteen times a whole page's analysis here; resiliparse's
main-content mode keeps DocBook's navigation tables.
"""

from __future__ import annotations

import re

from selectolax.lexbor import LexborHTMLParser, LexborNode

MAIN_SELECTOR = "main, [role=main], div.body"
BOILERPLATE_SELECTOR = ", ".join(
    [
        "nav, header, footer, aside",
        "[role=navigation], [role=banner], [role=contentinfo], [role=complementary]",
        "[role=search]",
        "div.related, div.sphinxsidebar, div.footer",  # Sphinx
        "div.navheader, div.navfooter",  # DocBook
        "div.header, div.nav-panel",  # texinfo
    ]
)
# a class or id that names navigation: "navbar", "main-menu", "site-footer", "toc"...
NAVIGATION_NAME = re.compile(r"nav|menu|footer|sidebar|breadcrumb|\btoc\b", re.IGNORECASE)
NAMED_SELECTOR = "[class], [id]"
LINK_BLOCKS = "ul, ol, table, dl"
LINK_DENSITY = 0.6  # of a block's text in its links, from which it is navigation
MIN_LINKS = 3  # links a block holds at least to be taken for navigation
MAX_BLOCKS_CHECKED = 500  # lists and tables weighed on one page
MAX_BLOCKS_DROPPED = 100


def main_text(tree: LexborHTMLParser) -> str:
    """The main text of a parsed page, white space made single spaces. The tree loses
    the boilerplate: call this once its links and other text have been read."""
    body = tree.body
    if body is None:
        return ""
    _drop(_boilerplate(body))
    _drop_link_blocks(body)
    root = _main_element(tree) or body
    return " ".join(root.text(separator=" ").split())


def _boilerplate(body: LexborNode) -> list[LexborNode]:
    found = body.css(BOILERPLATE_SELECTOR)
    for node in body.css(NAMED_SELECTOR):
        attributes = node.attributes
        names = f"{attributes.get('class') or ''} {attributes.get('id') or ''}"
        if NAVIGATION_NAME.search(names) and node.tag not in ("body", "html"):
            found.append(node)
    return found


def _drop_link_blocks(body: LexborNode) -> None:
    """Remove the lists and tables that are mostly links, the outer ones first: once a
    block is removed, the blocks inside it went with it and the page is looked up
    again. At most MAX_BLOCKS_CHECKED blocks are weighed, and MAX_BLOCKS_DROPPED
    removed: a page of thousands of nested lists costs no more than that."""
    checked: set[int] = set()
    for _ in range(MAX_BLOCKS_DROPPED):
        for block in body.css(LINK_BLOCKS):
            if block.mem_id in checked:
                continue
            if len(checked) >= MAX_BLOCKS_CHECKED:
                return
            checked.add(block.mem_id)
            if _mostly_links(block):
                block.decompose()
                break
        else:
            return


def _mostly_links(block: LexborNode) -> bool:
    anchors = block.css("a")
    if len(anchors) < MIN_LINKS:
        return False
    total = len(block.text(separator=" ").split())
    linked = sum(len(anchor.text(separator=" ").split()) for anchor in anchors)
    return bool(total) and linked >= LINK_DENSITY * total


def _drop(nodes: list[LexborNode]) -> None:
    """Remove the nodes. Only the outermost are removed, with what they hold: removing a
    node frees those inside it, which must not be touched afterwards."""
    marked = {node.mem_id for node in nodes}
    outermost = {}
    for node in nodes:
        parent = node.parent
        while parent is not None and parent.mem_id not in marked:
            parent = parent.parent
        if parent is None:
            outermost[node.mem_id] = node
    for node in outermost.values():
        node.decompose()


def _main_element(tree: LexborHTMLParser) -> LexborNode | None:
    main = tree.css_first(MAIN_SELECTOR)
    if main is None or not main.text(separator=" ").strip():
        return None
    return main
