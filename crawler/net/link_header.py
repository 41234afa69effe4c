"""The `Link` header (RFC 8288, section 3): its links' targets and relation types.

    Link: </a>; rel="canonical", <https://example.com/s.css>; rel=preload; as=style

A header is a list of links, each a `<URI-reference>` and `;`-separated parameters whose
values are tokens or quoted strings (where `,`, `;` and `<` are text, and `\\` escapes).
A header sent several times is one list, its values joined with commas (RFC 9110, 5.3).
A link's relation types are its first `rel`'s space-separated values, compared without
case; a later `rel` is ignored, as the RFC says. A link that cannot be read (no `<`,
no `>`, a parameter without a name or `;`) is skipped up to the next comma outside
quotes; a quote never closed ends the header. Targets are returned as written: the
caller resolves them against the URL of the answer.
"""

from __future__ import annotations

from dataclasses import dataclass

_SPACE = " \t"
_TOKEN_ENDS = " \t;,="  # what ends a parameter's name or unquoted value


@dataclass(frozen=True, slots=True)
class HeaderLink:
    target: str
    relations: frozenset[str]  # lower case


def targets(header: str, relation: str) -> list[str]:
    """The targets of the header's links of `relation` (lower case), in order."""
    return [link.target for link in header_links(header) if relation in link.relations]


def header_links(header: str) -> list[HeaderLink]:
    """The links of a Link header's value that can be read, in order; those with no
    `rel` are left out."""
    found: list[HeaderLink] = []
    at, end = 0, len(header)
    while at < end:
        at = _skip(header, at, " \t,")
        if at == end:
            break
        if header[at] != "<":
            at = _past_link(header, at)
            continue
        close = header.find(">", at + 1)
        if close < 0:
            break
        target = header[at + 1 : close].strip()
        relations, at = _parameters(header, close + 1)
        if relations:
            found.append(HeaderLink(target, relations))
    return found


def _parameters(header: str, at: int) -> tuple[frozenset[str] | None, int]:
    """A link's relation types (None where its parameters cannot be read, or it has no
    `rel`), read from `at`, and where the next link starts."""
    relations: frozenset[str] | None = None
    end = len(header)
    while True:
        at = _skip(header, at, _SPACE)
        if at == end or header[at] == ",":
            return relations, at
        if header[at] != ";":
            return None, _past_link(header, at)
        at = _skip(header, at + 1, _SPACE)
        name, at = _token(header, at)
        if not name:
            return None, _past_link(header, at)
        at = _skip(header, at, _SPACE)
        value = ""
        if at < end and header[at] == "=":
            at = _skip(header, at + 1, _SPACE)
            if at < end and header[at] == '"':
                quoted = _quoted(header, at)
                if quoted is None:
                    return None, end  # a quote never closed: nothing after it can be read
                value, at = quoted
            else:
                value, at = _token(header, at)
        if name.lower() == "rel" and relations is None:
            relations = frozenset(value.lower().split())


def _skip(header: str, at: int, characters: str) -> int:
    while at < len(header) and header[at] in characters:
        at += 1
    return at


def _token(header: str, at: int) -> tuple[str, int]:
    start = at
    while at < len(header) and header[at] not in _TOKEN_ENDS:
        at += 1
    return header[start:at], at


def _quoted(header: str, at: int) -> tuple[str, int] | None:
    """The quoted string opening at `at`, unescaped, and where it ends; None if it never
    closes."""
    chars: list[str] = []
    at += 1
    while at < len(header):
        char = header[at]
        if char == '"':
            return "".join(chars), at + 1
        if char == "\\" and at + 1 < len(header):
            at += 1
            char = header[at]
        chars.append(char)
        at += 1
    return None


def _past_link(header: str, at: int) -> int:
    """Where the link after the one unreadable at `at` starts: past the next comma
    outside quotes (the header's end if a quote never closes)."""
    while at < len(header):
        char = header[at]
        if char == ",":
            return at + 1
        if char == '"':
            quoted = _quoted(header, at)
            if quoted is None:
                return len(header)
            at = quoted[1]
            continue
        at += 1
    return at
