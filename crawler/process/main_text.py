"""A page's main text: its body without navigation, menus, footers and sidebars.

Rules on the lexbor tree the page was parsed into (`crawler.process.parse`), chosen
on documentation as Debian ships it (Sphinx, DocBook, texinfo); their cost is measured
by `python -m bench search cost`:
- the page's main element (`main`, `[role=main]`, Sphinx's `div.body`) when it has one
  and it holds text, else the body. Within a main element only `nav`, `aside`, the
  roles below and lists of links are looked for: the navigation beside it is left out
  already, and each rule looked for costs a walk of the tree;
- without the elements that are navigation by their tag (`nav`, `header`, `footer`,
  `aside`), their role, the classes of the generators met (Sphinx's `div.related`,
  `div.sphinxsidebar`, `div.footer`; DocBook's `div.navheader`, `div.navfooter`;
  texinfo's `div.header`, `div.nav-panel`), or a container's class or id naming
  navigation (nav, menu, footer, sidebar, breadcrumb, toc);
- without the lists and tables that are mostly links (LINK_DENSITY): menus, tables of
  contents, the Prev/Up/Next tables of manuals written without those classes.

On 20 pages of the PostgreSQL manual trafilatura keeps every page's body and none of
its navigation too, but at some 34 ms a page, about fifteen times a whole page of this
crawler; resiliparse's main-content mode keeps the manual's navigation tables.
"""

from __future__ import annotations

from selectolax.lexbor import LexborHTMLParser, LexborNode

MAIN_SELECTOR = "main, [role=main], div.body"
BOILERPLATE_TAGS = frozenset({"nav", "header", "footer", "aside"})
BOILERPLATE_ROLES = frozenset({"navigation", "banner", "contentinfo", "complementary", "search"})
BOILERPLATE_CLASSES = frozenset(  # of a div
    {
        "related",  # Sphinx
        "sphinxsidebar",
        "footer",
        "navheader",  # DocBook
        "navfooter",
        "header",  # texinfo
        "nav-panel",
    }
)
# a container whose class or id names navigation ("navbar", "main-menu", "site-footer",
# "toc"); inline elements are left alone: Sphinx marks a menu path in the text as
# span.menuselection
NAMED_CONTAINERS = frozenset({"div", "section", "ul", "ol", "table", "td"})
NAVIGATION_NAMES = ("nav", "menu", "footer", "sidebar", "breadcrumb")
LINK_BLOCKS = frozenset({"ul", "ol", "table", "dl"})
# every element a rule may drop, found in one walk of the tree, in the document's order
# (lexbor's cost grows with the selectors: each walk of a big page costs a few tenths of
# a millisecond); within a main element, where the page's own navigation seldom is, the
# few that cost least and only lists weighed for their links
CANDIDATES = ", ".join(
    [
        *sorted(BOILERPLATE_TAGS),
        "[role]",
        *(f"div.{name}" for name in sorted(BOILERPLATE_CLASSES)),
        *(f"[{attribute}*={name} i]" for attribute in ("class", "id") for name in NAVIGATION_NAMES),
        "[class~=toc i], [id=toc i]",
        *sorted(LINK_BLOCKS),
    ]
)
# (Sphinx writes each function of an API as a dl, and tables of values, none of them menus)
CANDIDATES_IN_MAIN = "nav, aside, [role], ul, ol"
LINK_DENSITY = 0.6  # of a block's characters in its links, from which it is navigation
MIN_LINKS = 3  # links a block holds at least to be taken for navigation
MAX_BLOCKS_CHECKED = 500  # lists and tables weighed on one page


def main_text(tree: LexborHTMLParser) -> str:
    """The main text of a parsed page, white space made single spaces. The tree loses
    the boilerplate: call this once its links and other text have been read."""
    body = tree.body
    if body is None:
        return ""
    main = tree.css_first(MAIN_SELECTOR)
    if main is not None:
        text = _text_without(main, CANDIDATES_IN_MAIN)
        if text:
            return text
    return _text_without(body, CANDIDATES)


def _text_without(root: LexborNode, candidates: str) -> str:
    """The text of `root` without its boilerplate, of the elements `candidates` finds."""
    dropped: set[int] = set()
    outermost = []
    weighed = 0
    for node in root.css(candidates):
        if dropped and _inside(node, dropped, root):
            continue
        if _is_boilerplate(node):
            pass
        elif node.tag in LINK_BLOCKS and weighed < MAX_BLOCKS_CHECKED:
            weighed += 1
            if not _mostly_links(node):
                continue
        else:
            continue
        dropped.add(node.mem_id)
        outermost.append(node)
    for node in outermost:  # none inside another: removing a node frees those inside it
        node.decompose()
    return " ".join(root.text(separator=" ").split())


def _is_boilerplate(node: LexborNode) -> bool:
    tag = node.tag
    if tag in BOILERPLATE_TAGS:
        return True
    attributes = node.attributes
    if attributes.get("role") in BOILERPLATE_ROLES:
        return True
    if tag not in NAMED_CONTAINERS:
        return False
    classes = (attributes.get("class") or "").lower()
    if tag == "div" and not BOILERPLATE_CLASSES.isdisjoint(classes.split()):
        return True
    names = f"{classes} {(attributes.get('id') or '').lower()}"
    return any(name in names for name in NAVIGATION_NAMES) or "toc" in names.split()


def _inside(node: LexborNode, dropped: set[int], root: LexborNode) -> bool:
    parent = node.parent
    while parent is not None and parent.mem_id != root.mem_id:
        if parent.mem_id in dropped:
            return True
        parent = parent.parent
    return False


def _mostly_links(block: LexborNode) -> bool:
    anchors = block.css("a")
    if len(anchors) < MIN_LINKS:
        return False
    total = len(block.text())
    return bool(total) and sum(len(anchor.text()) for anchor in anchors) >= LINK_DENSITY * total
