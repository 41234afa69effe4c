"""One sitemap file read piece by piece, within the protocol's limits, entities refused."""

from __future__ import annotations

import gzip
import zlib

from crawler.fetch.sitemap_xml import MAX_FILE_BYTES, SitemapEntry, SitemapReader


def read(body: bytes, reader: SitemapReader | None = None, piece: int = 1000) -> SitemapReader:
    reader = reader or SitemapReader()
    for at in range(0, len(body), piece):
        if not reader.feed(body[at : at + piece]):
            break
    reader.close()
    return reader


def urlset(count: int) -> bytes:
    entries = "".join(f"<url><loc>http://a.test/{i}</loc></url>" for i in range(count))
    return (
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{entries}</urlset>'.encode()
    )


def test_entries_of_a_prefixed_urlset_with_their_lastmod() -> None:
    body = (
        b'<?xml version="1.0"?><s:urlset xmlns:s="http://www.sitemaps.org/schemas/sitemap/0.9">'
        b"<s:url><s:loc>\n  http://a.test/x  \n</s:loc><s:lastmod>2024-05-01</s:lastmod></s:url>"
        b"<s:url><s:loc>http://a.test/y</s:loc></s:url></s:urlset>"
    )
    reader = read(body, piece=7)
    assert reader.kind == "urlset"
    assert reader.entries == [
        SitemapEntry("http://a.test/x", "2024-05-01"),
        SitemapEntry("http://a.test/y"),
    ]
    assert reader.cut is None
    assert reader.error is None


def test_a_file_stops_at_the_protocol_s_50_000_entries() -> None:
    reader = read(urlset(50_002), piece=64 * 1024)
    assert len(reader.entries) == 50_000
    assert reader.cut == "50,000 entries"


def test_a_gzip_bomb_is_never_inflated_beyond_the_limit() -> None:
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    start = packer.compress(b"<urlset><url><loc>http://a.test/1</loc></url>")
    block = packer.flush(zlib.Z_FULL_FLUSH) + packer.compress(b" " * (1 << 20))
    block += packer.flush(zlib.Z_FULL_FLUSH)
    bomb = start + block * 1024  # a gigabyte inflated, a megabyte sent
    reader = SitemapReader()
    fed = 0
    for at in range(0, len(bomb), 64 * 1024):
        fed += 1
        if not reader.feed(bomb[at : at + 64 * 1024]):
            break
    assert reader.entries == [SitemapEntry("http://a.test/1")]
    assert reader.size == MAX_FILE_BYTES
    assert reader.cut == "52,428,800 bytes"
    assert fed == 1  # the first 64 KiB inflate past the limit: nothing more is read


def test_a_gzipped_file_reads_as_the_plain_one() -> None:
    assert read(gzip.compress(urlset(3)), piece=5).entries == read(urlset(3)).entries


def test_billion_laughs_and_external_entities_are_refused_unexpanded() -> None:
    laughs = (
        b'<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY a "aaaaaaaaaa">'
        b'<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>'
        b"<urlset><url><loc>http://a.test/&b;</loc></url></urlset>"
    )
    external = (
        b'<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY e SYSTEM "file:///etc/hostname">]>'
        b"<urlset><url><loc>http://a.test/&e;</loc></url></urlset>"
    )
    for body in (laughs, external):
        reader = read(body)
        assert reader.entries == []
        assert reader.error is not None
        assert "entity declarations are refused" in reader.error


def test_what_is_not_a_sitemap_ends_at_its_error_keeping_the_entries_before() -> None:
    assert read(b"<html><body>hello</body></html>").error == "not a sitemap: its root is <html>"
    broken = read(b"<urlset><url><loc>http://a.test/1</loc></url><url><loc>http://a")
    assert broken.entries == [SitemapEntry("http://a.test/1")]
    assert broken.error is not None
    assert read(b"").error == "empty"
