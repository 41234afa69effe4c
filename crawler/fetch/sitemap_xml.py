"""One sitemap file read as its body arrives (the sitemaps.org protocol): a `<urlset>`
of pages or a `<sitemapindex>` of other sitemaps, each entry's `<loc>` and `<lastmod>`.

Bounded whatever the file holds: a gzip body (`.xml.gz`, known by its magic bytes, so a
file also sent with `Content-Encoding: gzip` is unpacked once by the fetcher and once
here) is inflated a step of `INFLATE_STEP` bytes at a time and never beyond
`max_bytes`; reading stops after `max_entries` entries; either limit ends the file
there (`cut` says which) and the rest is never read. The XML is parsed by the standard
library's expat with every entity declaration refused, so no entity is expanded
(billion laughs) and no external one is loaded. A file that is not a sitemap, or not
well-formed, ends at its error; the entries before it are kept.
"""

from __future__ import annotations

import xml.parsers.expat
import zlib
from dataclasses import dataclass

MAX_FILE_ENTRIES = 50_000  # the protocol's limit of a file
MAX_FILE_BYTES = 50 * 1024 * 1024  # the protocol's 50 MB (52,428,800 bytes) uncompressed
INFLATE_STEP = 256 * 1024  # the most bytes one step of inflating makes
MAX_TEXT_CHARS = 4096  # a <loc> or <lastmod> longer than any URL the crawl keeps: dropped
GZIP_MAGIC = b"\x1f\x8b"
KINDS = ("urlset", "sitemapindex")


class SitemapError(ValueError):
    """The file holds what a sitemap may not (an entity declaration)."""


class _Full(Exception):
    """Raised out of expat's handlers: the file gave all the entries it may."""


@dataclass(frozen=True, slots=True)
class SitemapEntry:
    loc: str
    lastmod: str | None = None  # as written (W3C datetime)


class SitemapReader:
    """Feed it the body's pieces (`feed`) until it says to stop, then `close` it."""

    def __init__(self, *, max_entries: int = MAX_FILE_ENTRIES, max_bytes: int = MAX_FILE_BYTES):
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.kind: str | None = None  # "urlset" or "sitemapindex", once the root is read
        self.entries: list[SitemapEntry] = []
        self.size = 0  # bytes of XML read (after inflating)
        self.cut: str | None = None  # the limit that ended the file early
        self.error: str | None = None  # what ended the file early otherwise
        self._head = b""  # the first bytes, until the magic can be told
        self._started = False
        self._inflater: zlib._Decompress | None = None
        self._parser: xml.parsers.expat.XMLParserType | None = None
        self._path: list[str] = []  # local names of the open elements
        self._text: list[str] | None = None  # the text of the open <loc> or <lastmod>
        self._length = 0
        self._loc: str | None = None
        self._lastmod: str | None = None

    @property
    def done(self) -> bool:
        return self.cut is not None or self.error is not None

    def feed(self, data: bytes) -> bool:
        """Read a piece of the body; whether to read more."""
        if self.done:
            return False
        if not self._started:
            self._head += data
            if len(self._head) < len(GZIP_MAGIC):
                return True
            data, self._head, self._started = self._head, b"", True
            if data.startswith(GZIP_MAGIC):
                self._inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
        if self._inflater is None:
            self._parse(data)
            return not self.done
        try:
            while data and not self.done:
                room = self.max_bytes - self.size
                if room <= 0:
                    self.cut = f"{self.max_bytes:,} bytes"
                    break
                piece = self._inflater.decompress(data, min(INFLATE_STEP, room))
                data = self._inflater.unconsumed_tail
                self._parse(piece)
                if self._inflater.eof:
                    break
        except zlib.error as error:
            self.error = f"bad gzip: {error}"
        return not self.done

    def close(self) -> None:
        """The body has ended."""
        if self.done:
            return
        if not self._started and self._head:
            self._started = True
            self._parse(self._head)
        if self._inflater is not None and not self._inflater.eof and self._started:
            self.error = "gzip ends early"
            return
        if self._parser is None:
            self.error = "empty"
            return
        self._parse(b"", final=True)

    def _parse(self, data: bytes, *, final: bool = False) -> None:
        if not final and len(data) > self.max_bytes - self.size:
            data = data[: self.max_bytes - self.size]
            self.cut = f"{self.max_bytes:,} bytes"
        self.size += len(data)
        parser = self._parser or self._new_parser()
        try:
            parser.Parse(data, final)
        except _Full:
            pass  # `cut` says why
        except SitemapError as error:
            self.error = str(error)
        except xml.parsers.expat.ExpatError as error:
            if self.cut is None:  # past a limit, the document is cut short by design
                self.error = f"not well-formed XML: {error}"

    def _new_parser(self) -> xml.parsers.expat.XMLParserType:
        parser = self._parser = xml.parsers.expat.ParserCreate()
        parser.SetParamEntityParsing(xml.parsers.expat.XML_PARAM_ENTITY_PARSING_NEVER)
        parser.EntityDeclHandler = _refuse_entity
        parser.UnparsedEntityDeclHandler = _refuse_entity
        parser.ExternalEntityRefHandler = _refuse_external
        parser.StartElementHandler = self._start
        parser.EndElementHandler = self._end
        parser.CharacterDataHandler = self._characters
        parser.buffer_text = True
        return parser

    def _start(self, name: str, _attributes: dict[str, str]) -> None:
        local = name.rpartition(":")[2]
        self._path.append(local)
        depth = len(self._path)
        if depth == 1:
            if local not in KINDS:
                raise SitemapError(f"not a sitemap: its root is <{name}>")
            self.kind = local
        elif depth == 2 and local in ("url", "sitemap"):
            self._loc = self._lastmod = None
        elif depth == 3 and local in ("loc", "lastmod"):
            self._text, self._length = [], 0

    def _characters(self, data: str) -> None:
        if self._text is not None and self._length <= MAX_TEXT_CHARS:
            self._text.append(data)
            self._length += len(data)

    def _end(self, _name: str) -> None:
        local = self._path.pop()
        depth = len(self._path) + 1
        if depth == 3 and self._text is not None:
            value = "".join(self._text).strip() if self._length <= MAX_TEXT_CHARS else ""
            self._text = None
            if local == "loc":
                self._loc = value or None
            else:
                self._lastmod = value or None
        elif depth == 2 and local in ("url", "sitemap") and self._loc is not None:
            self.entries.append(SitemapEntry(self._loc, self._lastmod))
            self._loc = None
            if len(self.entries) >= self.max_entries:
                self.cut = f"{self.max_entries:,} entries"
                raise _Full


def _refuse_entity(name: str, *_rest: object) -> None:
    raise SitemapError(f"entity declarations are refused (<!ENTITY {name} ...>)")


def _refuse_external(*_rest: object) -> int:
    raise SitemapError("external entities are refused")
