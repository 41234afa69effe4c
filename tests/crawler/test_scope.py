from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from yarl import URL

from crawler.net.scope import LinkScope, Scope, looks_like_a_trap
from crawler.net.urls import BadUrlError, canonicalize, host_key


def test_scope_takes_hosts_with_their_subdomains_and_a_maximum_depth() -> None:
    scope = Scope.of(["Example.com"], max_depth=2)
    assert scope.allows(URL("http://example.com/"), depth=2)
    assert scope.allows(URL("http://www.example.com:8080/"), depth=0)
    assert not scope.allows(URL("http://badexample.com/"))
    assert not scope.allows(URL("http://example.com.evil.net/"))
    assert not scope.allows(URL("http://example.com/"), depth=3)
    assert Scope.of([]).allows(URL("http://anywhere.net/"), depth=100)


def test_paths_that_repeat_or_go_too_deep_look_like_traps() -> None:
    assert not looks_like_a_trap(URL("http://a.test/a/b/a/b/"))
    assert looks_like_a_trap(URL("http://a.test/a/b/a/b/a/"))
    assert looks_like_a_trap(URL("http://a.test/" + "/".join(f"d{i}" for i in range(21))))
    assert not looks_like_a_trap(URL("http://a.test/" + "/".join(f"d{i}" for i in range(20))))
    assert not Scope.of(["a.test"]).allows(URL("http://a.test/x/x/x"))


def test_a_link_scope_names_the_host_of_a_link_in_scope(monkeypatch: pytest.MonkeyPatch) -> None:
    read = []

    def allows_place(scope: Scope, host: str, path: str) -> bool:
        read.append(f"{host}{path}")
        return allowed(scope, host, path)

    allowed = Scope.allows_place
    monkeypatch.setattr(Scope, "allows_place", allows_place)
    links = LinkScope(Scope.of({"site.example"}, max_depth=2))
    assert links.host("http://docs.site.example:8080/a", 1) == "docs.site.example:8080"
    assert links.host("http://site.example/a", 2) == "site.example"
    assert links.host("http://site.example/a", 3) is None  # beyond the depth, for now
    assert links.host("http://other.example/a", 1) is None
    assert links.host("http://site.example/a/b/a/b/a/b", 1) is None  # a trap
    # a URL out of scope by its host or path is out at every depth: not read again
    assert links.host("http://other.example/a", 0) is None
    assert links.host("http://site.example/a/b/a/b/a/b", 0) is None
    assert read == [
        "docs.site.example/a",
        "site.example/a",
        "other.example/a",
        "site.example/a/b/a/b/a/b",
    ]


_CANONICAL_PIECES = st.sampled_from(
    ["http://", "https://", "Site.Example", "site.example", "docs.site.example", "other.example",
     "127.0.0.1", "[::1]", "user@", "user:pw@", ":8080", ":80", ":08080", "/", "/a", "/b", "/a/b",
     "%2F", ";x=1", "?q=1", "?", "é", "."]
)  # fmt: skip


@given(st.lists(_CANONICAL_PIECES, min_size=1, max_size=6).map("".join), st.integers(0, 3))
@example("http://Docs.Site.Example:8080/a/a/a/b", 1)
@example("http://user:8@site.example/a", 1)
def test_a_link_scope_reads_a_url_as_yarl_does(raw: str, depth: int) -> None:
    try:
        url = str(canonicalize(raw))
    except BadUrlError:
        return
    scope = Scope.of({"site.example"}, max_depth=2)
    parsed = URL(url, encoded=True)
    expected = host_key(parsed) if scope.allows(parsed, depth) else None
    assert LinkScope(scope).host(url, depth) == expected
    unbounded = Scope.of([])
    expected = host_key(parsed) if unbounded.allows(parsed, depth) else None
    assert LinkScope(unbounded).host(url, depth) == expected
