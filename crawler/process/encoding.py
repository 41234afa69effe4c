"""A page's character encoding, sniffed as the HTML standard says, and its text.

The order (HTML, "determining the character encoding"): a byte order mark (UTF-8,
UTF-16LE, UTF-16BE), then the transport's charset, then a `<meta>` found by the
prescan of the first 1,024 bytes, then the fallback: UTF-8 if the bytes are UTF-8 (an
incomplete character at the end of a cut body aside), else windows-1252. Browsers fall
back to their locale's encoding, windows-1252 in most; bytes that decode as UTF-8 are
nearly never windows-1252 text, and most pages that declare nothing are UTF-8.

Labels are read by the Encoding Standard's table (`latin1`, `iso-8859-1` and `ascii`
are windows-1252); anything else, codecs that are no text encoding (base64, rot13,
zlib) included, is an unknown label. Each encoding decodes through the Python codec
that agrees with the standard's index (GBK as gb18030, Big5 as big5hkscs, Shift_JIS as
cp932, EUC-KR as cp949); windows-1252's five unassigned bytes become U+FFFD where the
standard gives C1 controls. The replacement encoding (labels of ISO-2022-KR, HZ and
ISO-2022-CN, whose bytes could smuggle markup) reads as one U+FFFD; x-user-defined maps
bytes 0x80-0xFF to U+F780-U+F7FF.
"""

from __future__ import annotations

import codecs

PRESCAN_BYTES = 1024  # where the prescan looks for a <meta>

UTF_8, UTF_16LE, UTF_16BE = "UTF-8", "UTF-16LE", "UTF-16BE"
WINDOWS_1252 = "windows-1252"
REPLACEMENT, USER_DEFINED = "replacement", "x-user-defined"

# The Encoding Standard's encodings and labels (https://encoding.spec.whatwg.org/#names-and-labels)
_ENCODINGS: dict[str, tuple[str, ...]] = {
    UTF_8: ("unicode-1-1-utf-8", "unicode11utf8", "unicode20utf8", "utf-8", "utf8",
            "x-unicode20utf8"),
    "IBM866": ("866", "cp866", "csibm866", "ibm866"),
    "ISO-8859-2": ("csisolatin2", "iso-8859-2", "iso-ir-101", "iso8859-2", "iso88592",
                   "iso_8859-2", "iso_8859-2:1987", "l2", "latin2"),
    "ISO-8859-3": ("csisolatin3", "iso-8859-3", "iso-ir-109", "iso8859-3", "iso88593",
                   "iso_8859-3", "iso_8859-3:1988", "l3", "latin3"),
    "ISO-8859-4": ("csisolatin4", "iso-8859-4", "iso-ir-110", "iso8859-4", "iso88594",
                   "iso_8859-4", "iso_8859-4:1988", "l4", "latin4"),
    "ISO-8859-5": ("csisolatincyrillic", "cyrillic", "iso-8859-5", "iso-ir-144",
                   "iso8859-5", "iso88595", "iso_8859-5", "iso_8859-5:1988"),
    "ISO-8859-6": ("arabic", "asmo-708", "csiso88596e", "csiso88596i", "csisolatinarabic",
                   "ecma-114", "iso-8859-6", "iso-8859-6-e", "iso-8859-6-i", "iso-ir-127",
                   "iso8859-6", "iso88596", "iso_8859-6", "iso_8859-6:1987"),
    "ISO-8859-7": ("csisolatingreek", "ecma-118", "elot_928", "greek", "greek8",
                   "iso-8859-7", "iso-ir-126", "iso8859-7", "iso88597", "iso_8859-7",
                   "iso_8859-7:1987", "sun_eu_greek"),
    "ISO-8859-8": ("csiso88598e", "csisolatinhebrew", "hebrew", "iso-8859-8",
                   "iso-8859-8-e", "iso-ir-138", "iso8859-8", "iso88598", "iso_8859-8",
                   "iso_8859-8:1988", "visual"),
    "ISO-8859-8-I": ("csiso88598i", "iso-8859-8-i", "logical"),
    "ISO-8859-10": ("csisolatin6", "iso-8859-10", "iso-ir-157", "iso8859-10", "iso885910",
                    "l6", "latin6"),
    "ISO-8859-13": ("iso-8859-13", "iso8859-13", "iso885913"),
    "ISO-8859-14": ("iso-8859-14", "iso8859-14", "iso885914"),
    "ISO-8859-15": ("csisolatin9", "iso-8859-15", "iso8859-15", "iso885915", "iso_8859-15",
                    "l9"),
    "ISO-8859-16": ("iso-8859-16",),
    "KOI8-R": ("cskoi8r", "koi", "koi8", "koi8-r", "koi8_r"),
    "KOI8-U": ("koi8-ru", "koi8-u"),
    "macintosh": ("csmacintosh", "mac", "macintosh", "x-mac-roman"),
    "windows-874": ("dos-874", "iso-8859-11", "iso8859-11", "iso885911", "tis-620",
                    "windows-874"),
    "windows-1250": ("cp1250", "windows-1250", "x-cp1250"),
    "windows-1251": ("cp1251", "windows-1251", "x-cp1251"),
    WINDOWS_1252: ("ansi_x3.4-1968", "ascii", "cp1252", "cp819", "csisolatin1", "ibm819",
                   "iso-8859-1", "iso-ir-100", "iso8859-1", "iso88591", "iso_8859-1",
                   "iso_8859-1:1987", "l1", "latin1", "us-ascii", "windows-1252",
                   "x-cp1252"),
    "windows-1253": ("cp1253", "windows-1253", "x-cp1253"),
    "windows-1254": ("cp1254", "csisolatin5", "iso-8859-9", "iso-ir-148", "iso8859-9",
                     "iso88599", "iso_8859-9", "iso_8859-9:1989", "l5", "latin5",
                     "windows-1254", "x-cp1254"),
    "windows-1255": ("cp1255", "windows-1255", "x-cp1255"),
    "windows-1256": ("cp1256", "windows-1256", "x-cp1256"),
    "windows-1257": ("cp1257", "windows-1257", "x-cp1257"),
    "windows-1258": ("cp1258", "windows-1258", "x-cp1258"),
    "x-mac-cyrillic": ("x-mac-cyrillic", "x-mac-ukrainian"),
    "GBK": ("chinese", "csgb2312", "csiso58gb231280", "gb2312", "gb_2312", "gb_2312-80",
            "gbk", "iso-ir-58", "x-gbk"),
    "gb18030": ("gb18030",),
    "Big5": ("big5", "big5-hkscs", "cn-big5", "csbig5", "x-x-big5"),
    "EUC-JP": ("cseucpkdfmtjapanese", "euc-jp", "x-euc-jp"),
    "ISO-2022-JP": ("csiso2022jp", "iso-2022-jp"),
    "Shift_JIS": ("csshiftjis", "ms932", "ms_kanji", "shift-jis", "shift_jis", "sjis",
                  "windows-31j", "x-sjis"),
    "EUC-KR": ("cseuckr", "csksc56011987", "euc-kr", "iso-ir-149", "korean",
               "ks_c_5601-1987", "ks_c_5601-1989", "ksc5601", "ksc_5601", "windows-949"),
    REPLACEMENT: ("csiso2022kr", "hz-gb-2312", "iso-2022-cn", "iso-2022-cn-ext",
                  "iso-2022-kr", "replacement"),
    UTF_16BE: ("unicodefffe", "utf-16be"),
    UTF_16LE: ("csunicode", "iso-10646-ucs-2", "ucs-2", "unicode", "unicodefeff", "utf-16",
               "utf-16le"),
    USER_DEFINED: ("x-user-defined",),
}  # fmt: skip

LABELS = {label: name for name, labels in _ENCODINGS.items() for label in labels}

# the Python codec of each encoding whose name is not one already
_CODECS = {
    "ISO-8859-8-I": "iso8859_8",
    "macintosh": "mac_roman",
    "windows-874": "cp874",
    "x-mac-cyrillic": "mac_cyrillic",
    "GBK": "gb18030",
    "Big5": "big5hkscs",
    "Shift_JIS": "cp932",
    "EUC-KR": "cp949",
    UTF_16BE: "utf-16-be",
    UTF_16LE: "utf-16-le",
}

_BYTE_ORDER_MARKS = ((codecs.BOM_UTF8, UTF_8), (b"\xfe\xff", UTF_16BE), (b"\xff\xfe", UTF_16LE))
_SPACE = b"\t\n\x0c\r "
_META_END = (b"\t", b"\n", b"\x0c", b"\r", b" ", b"/")  # what follows `<meta`
_USER_DEFINED = {byte: 0xF780 + byte - 0x80 for byte in range(0x80, 0x100)}


def encoding_for(label: str | None) -> str | None:
    """The encoding a label names (the standard's "get an encoding"), None if unknown."""
    if not label:
        return None
    return LABELS.get(label.strip("\t\n\x0c\r ").lower())


def sniff(body: bytes, transport_label: str | None) -> tuple[str, int]:
    """The encoding of an HTML body and where its text starts (after a byte order mark)."""
    for mark, name in _BYTE_ORDER_MARKS:
        if body.startswith(mark):
            return name, len(mark)
    found = encoding_for(transport_label) or prescan(body[:PRESCAN_BYTES])
    if found is not None:
        return found, 0
    return (UTF_8 if _is_utf8(body) else WINDOWS_1252), 0


def decoded(body: bytes, name: str, start: int = 0) -> str:
    """The text of `body[start:]` in the encoding `name`, bad bytes as U+FFFD."""
    data = body[start:] if start else body
    if name == REPLACEMENT:
        return "\ufffd" if data else ""
    if name == USER_DEFINED:
        return data.decode("latin-1").translate(_USER_DEFINED)
    return data.decode(_CODECS.get(name, name), errors="replace")


def _is_utf8(body: bytes) -> bool:
    try:
        codecs.getincrementaldecoder("utf-8")().decode(body, final=False)
    except UnicodeDecodeError:
        return False
    return True


def prescan(head: bytes) -> str | None:
    """The encoding a `<meta>` in `head` declares (the standard's prescan), or None."""
    at = head.find(b"<")
    while at >= 0:
        if head.startswith(b"<!--", at):
            close = head.find(b"-->", at + 2)
            if close < 0:
                return None
            at = close + 2
        elif head[at : at + 5].lower() == b"<meta" and head[at + 5 : at + 6] in _META_END:
            found, at = _meta(head, at + 5)
            if found is not None:
                return found
        elif _starts_tag(head, at + 1):
            at = _skip_tag(head, at)
        elif head[at + 1 : at + 2] in (b"!", b"/", b"?"):
            at = head.find(b">", at + 2)
            if at < 0:
                return None
        at = head.find(b"<", at + 1)
    return None


def _starts_tag(head: bytes, at: int) -> bool:
    """Whether a tag name (`a` of `<a` or `</a`) starts at `at`."""
    if head[at : at + 1] == b"/":
        at += 1
    return head[at : at + 1].isalpha()


def _skip_tag(head: bytes, at: int) -> int:
    """Past a tag that is no `<meta>`: its name and attributes."""
    while at < len(head) and head[at] not in _SPACE and head[at] != ord(">"):
        at += 1
    while (attribute := _attribute(head, at)) is not None:
        at = attribute[2]
    return at


def _meta(head: bytes, at: int) -> tuple[str | None, int]:
    """The encoding a `<meta>`'s attributes declare, and where reading them ended."""
    names: set[bytes] = set()
    got_pragma = charset_given = False
    need_pragma: bool | None = None
    charset: str | None = None  # None once given: an unknown label
    while (attribute := _attribute(head, at)) is not None:
        name, value, at = attribute
        if name in names:
            continue
        names.add(name)
        if name == b"http-equiv":
            got_pragma = got_pragma or value == b"content-type"
        elif name == b"content" and not charset_given:
            declared = _charset_in_content(value)
            found = encoding_for(declared.decode("latin-1")) if declared else None
            if found is not None:
                charset, charset_given, need_pragma = found, True, True
        elif name == b"charset":
            charset, charset_given = encoding_for(value.decode("latin-1")), True
            need_pragma = False
    if need_pragma is None or (need_pragma and not got_pragma) or charset is None:
        return None, at
    if charset in (UTF_16LE, UTF_16BE):
        return UTF_8, at  # a page read far enough to find its <meta> is no UTF-16
    if charset == USER_DEFINED:
        return WINDOWS_1252, at
    return charset, at


def _attribute(head: bytes, at: int) -> tuple[bytes, bytes, int] | None:
    """The attribute at `at` (name, value, lower-cased) and where it ends; None at `>`
    or the end of `head` (the standard's "get an attribute")."""
    end = len(head)
    while at < end and (head[at] in _SPACE or head[at] == ord("/")):
        at += 1
    if at >= end or head[at] == ord(">"):
        return None
    name = bytearray()
    while True:
        if at >= end:
            return None
        byte = head[at]
        if byte == ord("=") and name:
            at += 1
            break
        if byte in _SPACE:
            while at < end and head[at] in _SPACE:
                at += 1
            if at >= end:
                return None
            if head[at] != ord("="):
                return bytes(name), b"", at
            at += 1
            break
        if byte in b"/>":
            return bytes(name), b"", at
        name.append(byte)
        at += 1
    name = name.lower()
    while at < end and head[at] in _SPACE:
        at += 1
    if at >= end:
        return None
    value = bytearray()
    quote = head[at]
    if quote in b"\"'":
        close = head.find(bytes([quote]), at + 1)
        if close < 0:
            return None
        return bytes(name), head[at + 1 : close].lower(), close + 1
    if quote == ord(">"):
        return bytes(name), b"", at
    while at < end and head[at] not in _SPACE and head[at] != ord(">"):
        value.append(head[at])
        at += 1
    if at >= end:
        return None
    return bytes(name), bytes(value).lower(), at


def _charset_in_content(content: bytes) -> bytes | None:
    """The charset a `<meta content>` names (the standard's "extracting a character
    encoding from a meta element"), or None."""
    at = 0
    while (found := content.find(b"charset", at)) >= 0:
        at = found + len(b"charset")
        while at < len(content) and content[at] in _SPACE:
            at += 1
        if content[at : at + 1] != b"=":
            continue
        at += 1
        while at < len(content) and content[at] in _SPACE:
            at += 1
        quote = content[at : at + 1]
        if quote in (b'"', b"'"):
            close = content.find(quote, at + 1)
            return content[at + 1 : close] if close >= 0 else None
        value = bytearray()
        while at < len(content) and content[at] not in _SPACE and content[at] != ord(";"):
            value.append(content[at])
            at += 1
        return bytes(value) or None
    return None
