"""A page's encoding as the HTML standard sniffs it: byte order mark, the transport's
charset, the `<meta>` prescan of the first 1,024 bytes, then the fallback; labels by the
Encoding Standard's table."""

from __future__ import annotations

import codecs

import pytest
from aiohttp import web

import storage
from crawler.process.parse import ContentError, decode
from tests.crawler.helpers import Handler, crawl, serving, site

PAGE = "<title>Café</title><p>solar energy, naïve façade</p>"


@pytest.mark.parametrize(
    ("mark", "codec"),
    [(codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be")],
    ids=["LE", "BE"],
)
@pytest.mark.parametrize("header", [None, "iso-8859-1", "utf-8"])
def test_a_utf16_page_with_a_byte_order_mark_is_text_not_binary(
    mark: bytes, codec: str, header: str | None
) -> None:
    assert decode(mark + PAGE.encode(codec), header) == PAGE


def test_a_byte_order_mark_wins_over_the_headers_charset() -> None:
    body = codecs.BOM_UTF8 + PAGE.encode()
    assert decode(body, "iso-8859-1") == PAGE
    assert decode(body, None) == PAGE  # and is not part of the text


def test_nul_bytes_without_a_utf16_byte_order_mark_or_label_are_binary() -> None:
    with pytest.raises(ContentError, match="binary"):
        decode(b"<p>\x00\x00</p>", "iso-8859-1")
    assert decode("<p>x</p>".encode("utf-16-le"), "utf-16le") == "<p>x</p>"


def test_the_header_wins_over_a_meta_and_a_meta_over_the_fallback() -> None:
    body = '<meta charset="windows-1251"><p>Привет</p>'.encode("cp1251")
    assert decode(body, None).endswith("Привет</p>")
    assert "Привет" not in decode(body, "iso-8859-1")


def test_a_meta_beyond_the_first_1024_bytes_is_not_read() -> None:
    filler = "<!-- " + "x" * 1100 + " -->"
    body = f'{filler}<meta charset="windows-1251"><p>Привет</p>'.encode("cp1251")
    assert "Привет" not in decode(body, None)
    near = f'<!-- x --><meta charset="windows-1251">{filler}<p>Привет</p>'.encode("cp1251")
    assert decode(near, None).endswith("Привет</p>")


@pytest.mark.parametrize(
    ("head", "found"),
    [
        ('<meta http-equiv="Content-Type" content="text/html; charset=koi8-r">', True),
        ("<meta content='text/html; charset=\"koi8-r\"' http-equiv=content-type>", True),
        ('<meta content="text/html; charset=koi8-r">', False),  # no http-equiv: no pragma
        ("<!-- <meta charset=koi8-r> -->", False),  # in a comment
        ("<p title='<meta charset=koi8-r>'>", False),  # in an attribute
        ("<META CHARSET=KOI8-R>", True),
        ("<meta/charset=koi8-r>", True),
        ("<meta charset=bogus><meta charset=koi8-r>", True),  # the first that names one
    ],
)
def test_the_meta_prescan_reads_tags_as_a_browser_does(head: str, found: bool) -> None:
    body = f"{head}<p>Привет</p>".encode("koi8-r")
    assert (decode(body, None).endswith("Привет</p>")) is found


@pytest.mark.parametrize("label", ["latin1", "iso-8859-1", "ascii", "US-ASCII", " Latin1 "])
def test_latin1_iso_8859_1_and_ascii_labels_are_windows_1252(label: str) -> None:
    body = b"<p>\x80 \x93quoted\x94 caf\xe9</p>"
    assert decode(body, label) == "<p>€ “quoted” café</p>"
    assert decode(f'<meta charset="{label.strip()}">'.encode() + body, None).endswith("café</p>")


@pytest.mark.parametrize("label", ["utf-7", "utf_8_sig", "cp037", "mbcs", "punycode"])
def test_a_codec_the_encoding_standard_does_not_name_is_an_unknown_label(label: str) -> None:
    body = "<p>a+AGE-b café</p>".encode()
    assert decode(body, label) == "<p>a+AGE-b café</p>"


def test_the_fallback_is_utf8_when_the_bytes_are_utf8_else_windows_1252() -> None:
    assert decode("<p>café</p>".encode(), None) == "<p>café</p>"
    assert decode(b"<p>caf\xe9</p>", None) == "<p>café</p>"
    # a body cut in the middle of its last character is still UTF-8
    assert decode("<p>café €".encode()[:-1], None) == "<p>café \ufffd"


def test_the_replacement_and_user_defined_encodings() -> None:
    assert decode(b"<p>\x1b$)C\x0e</p>", "iso-2022-kr") == "\ufffd"
    assert decode(b"a\x80\xff", "x-user-defined") == "a\uf780\uf7ff"


def test_every_encoding_in_the_table_has_a_codec() -> None:
    from crawler.process import encoding

    for label, name in encoding.LABELS.items():
        assert encoding.encoding_for(label.upper()) == name
        assert isinstance(encoding.decoded(b"abc", name), str), label


def utf16_page() -> Handler:
    body = codecs.BOM_UTF16_LE + PAGE.encode("utf-16-le")

    async def handler(_request: web.Request) -> web.Response:
        return web.Response(body=body, headers={"Content-Type": "text/html"})

    return handler


async def test_a_utf16_page_with_a_byte_order_mark_is_stored_with_its_text(db_url: str) -> None:
    async with serving(site({"/": utf16_page()})) as base:
        await crawl(db_url, [base])
    engine = storage.open_engine(db_url)
    try:
        async with engine.connect() as connection:
            text = await storage.page_text(connection, base)
    finally:
        await engine.dispose()
    assert text == "solar energy, naïve façade"
