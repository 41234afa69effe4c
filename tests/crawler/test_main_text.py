"""A page's main text: its body paragraphs, none of its navigation, on real pages
(Debian's documentation: `tests/data/main_text/README.md`) and on the rules' own cases."""

from __future__ import annotations

from pathlib import Path

import pytest
from selectolax.lexbor import LexborHTMLParser

from crawler.process.main_text import main_text
from crawler.process.parse import analyze
from policies.terms import TermHasher

PAGES = Path(__file__).parents[1] / "data" / "main_text"

# page: (its first body sentence, its last, what its navigation says)
REAL_PAGES = {
    "postgresql-tutorial-concepts.html": (
        "PostgreSQL is a relational database management system",
        "constitutes a database cluster .",
        ["Prev Up", "Home Next", "2.3. Creating a New Table"],
    ),
    "postgresql-datatype-boolean.html": (
        "PostgreSQL provides the standard SQL type boolean",
        "the literal must be of type boolean .",
        ["Prev Up", "Home Next", "8.5. Date/Time Types", "8.7. Enumerated Types"],
    ),
    "postgresql-sql-droprole.html": (
        "DROP ROLE removes the specified role(s).",
        "CREATE ROLE , ALTER ROLE , SET ROLE",
        ["Prev Up", "Home Next", "DROP PUBLICATION", "DROP ROUTINE"],
    ),
    "python-bugs.html": (
        "Python is a mature programming language",
        "any and all questions pertaining to the process of fixing issues in Python.",
        ["index modules", "Previous topic", "Show Source", "Report a Bug", "Copyright 2001"],
    ),
    "python-library-keyword.html": (
        "This module allows a Python program to determine if a string is a keyword",
        "these will be included as well. New in version 3.9.",
        ["index modules", "Previous topic", "Next topic", "Show Source", "Copyright 2001"],
    ),
    "libffi-the-basics.html": (
        "libffi assumes that you have a pointer to the function you wish to call",
        "usually ffi_arg .",
        ["Next: Simple Example", "Up: Using libffi", "[ Index ]"],
    ),
}


def text_of(html: str) -> str:
    tree = LexborHTMLParser(html)
    tree.strip_tags(["script", "style", "noscript", "template"])
    return main_text(tree)


@pytest.mark.parametrize("name", sorted(REAL_PAGES))
def test_the_main_text_of_a_documentation_page_is_its_body_without_its_navigation(
    name: str,
) -> None:
    first, last, navigation = REAL_PAGES[name]
    html = (PAGES / name).read_text(encoding="utf-8")
    whole = text_of_body(html)
    assert all(words in whole for words in navigation)  # the page has its navigation
    text = text_of(html)
    assert first in text
    assert text.endswith(last)
    for words in navigation:
        assert words not in text


def text_of_body(html: str) -> str:
    body = LexborHTMLParser(html).body
    assert body is not None
    return " ".join(body.text(separator=" ").split())


def test_navigation_named_by_tag_role_class_or_id_is_left_out() -> None:
    html = (
        "<body><header>Site name</header><div class='top-menu'>Products</div>"
        "<div id='breadcrumbs'>Home / Docs</div><div role='navigation'>Jump</div>"
        "<p>The body paragraph.</p><aside>Related posts</aside>"
        "<div class='site-footer'>Contact us</div><footer>Legal</footer></body>"
    )
    assert text_of(html) == "The body paragraph."


def test_a_list_of_links_is_left_out_and_a_list_of_words_kept() -> None:
    menu = "".join(f"<li><a href='/{i}'>Page {i}</a></li>" for i in range(5))
    words = "<li>flour</li><li>sugar</li><li>eggs, and <a href='/eggs'>where to buy</a></li>"
    html = f"<body><ul>{menu}</ul><p>Bake a cake.</p><ul>{words}</ul></body>"
    assert text_of(html) == "Bake a cake. flour sugar eggs, and where to buy"


def test_the_main_element_is_the_text_when_the_page_has_one() -> None:
    html = "<body><div>Above</div><main><p>Main part.</p></main><div>Below</div></body>"
    assert text_of(html) == "Main part."
    empty = "<body><div>All there is.</div><main> </main></body>"
    assert text_of(empty) == "All there is."


def test_analysis_gives_the_main_text_and_still_reads_the_navigations_links() -> None:
    html = (PAGES / "postgresql-tutorial-concepts.html").read_bytes()
    analysis = analyze(
        html,
        url="http://127.0.0.1/docs/tutorial-concepts.html",
        charset="utf-8",
        x_robots_tag=None,
        counter=TermHasher(),
    )
    assert analysis.text.startswith("2.2. Concepts PostgreSQL is a relational database")
    assert "Prev Up" not in analysis.text
    linked = {link.url.rsplit("/", 1)[1] for link in analysis.links}
    assert {"tutorial-sql-intro.html", "tutorial-table.html", "index.html"} <= linked
