"""The Link header (RFC 8288) read link by link: several links in one header or in
several, quoted and unquoted parameters, relation types in any case and several to a
link, commas and semicolons inside quotes and URLs, and what cannot be read skipped."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from crawler.net.link_header import HeaderLink, header_links, targets


def test_each_link_of_a_header_with_its_relation_types() -> None:
    header = '</a>; rel="canonical", <https://x.example/s.css>; rel=preload; as=style'
    assert header_links(header) == [
        HeaderLink("/a", frozenset({"canonical"})),
        HeaderLink("https://x.example/s.css", frozenset({"preload"})),
    ]


def test_relation_types_are_read_without_case_and_one_link_may_have_several() -> None:
    header = '<b>; REL="Alternate  Canonical"; title="x", <c>;rel=next'
    assert targets(header, "canonical") == ["b"]
    assert targets(header, "next") == ["c"]
    assert targets(header, "alternate") == ["b"]


def test_commas_and_semicolons_in_quoted_values_and_urls_are_text() -> None:
    header = (
        '</a,b;c>; title="one, two; <three>"; rel="canonical", '
        '</d>; title="say \\"x\\", then"; rel=canonical'
    )
    assert targets(header, "canonical") == ["/a,b;c", "/d"]


def test_headers_given_several_times_are_one_list() -> None:
    joined = ", ".join(['</a>; rel="preload"', '</b>; rel="canonical"'])
    assert targets(joined, "canonical") == ["/b"]


def test_the_first_rel_of_a_link_counts_and_later_ones_are_ignored() -> None:
    assert targets(
        '</a>; rel=canonical; rel=next, </b>; rel=next; rel="canonical"', "canonical"
    ) == ["/a"]


def test_a_link_that_cannot_be_read_is_skipped_and_the_next_read() -> None:
    for header, found in [
        ('garbage, </b>; rel="canonical"', ["/b"]),
        ("</a> rel=canonical, </b>; rel=canonical", ["/b"]),  # no ;
        ('</a>; rel="canonical, </b>; rel=canonical', []),  # a quote never closed
        ("</a; rel=canonical", []),  # no >
        ('</a>; rel="canonical"; =x, </b>; rel=canonical', ["/b"]),  # a parameter without a name
        ("", []),
        (" , ,", []),
        ("</a>", []),  # no relation
    ]:
        assert targets(header, "canonical") == found, header


@given(st.text(alphabet='<>;,="\\ \tabc/', max_size=60))
def test_any_header_is_read_without_error(header: str) -> None:
    for link in header_links(header):
        assert ">" not in link.target
