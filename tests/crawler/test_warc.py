"""WARC files of a crawl: every answer kept, read back with warcio, rows pointing at them."""

from __future__ import annotations

import asyncio
import gzip
import json
from pathlib import Path

import pytest
from aiohttp import web

from crawler.cli import main
from crawler.store.warc_files import WarcError
from testbed.server import Testbed
from testbed.sources import EphemeralSource
from testbed.web import WebSpec
from tests.crawler.helpers import collection, crawl, html, links, serving, site, stored
from tests.crawler.warcs import captures, read_records, twice, warc_files, warcio_check

SAME = "<html><body><p>the same words on two pages</p></body></html>"
PDF = b"%PDF-1.4 not really a document \x00\x01\x02"


async def gzipped(_request: web.Request) -> web.Response:
    body = links(words="compressed solar page").encode()
    return web.Response(
        body=gzip.compress(body),
        content_type="text/html",
        headers={"Content-Encoding": "gzip"},
    )


async def chunked(request: web.Request) -> web.StreamResponse:
    response = web.StreamResponse(headers={"Content-Type": "text/html"})
    response.enable_chunked_encoding()
    await response.prepare(request)
    await response.write(b"<html><body><p>sent in ")
    await response.write(b"two chunks</p></body></html>")
    await response.write_eof()
    return response


async def pdf(_request: web.Request) -> web.Response:
    return web.Response(body=PDF, content_type="application/pdf")


async def moved(_request: web.Request) -> web.Response:
    return web.Response(status=301, text="moved on", headers={"Location": "/target"})


def the_site() -> web.Application:
    return site(
        {
            "/": html(
                links("/a", "/gz", "/chunked", "/moved", "/missing", "/doc.pdf", "/s1", "/s2")
            ),
            "/a": html(links(words="solar energy page a")),
            "/gz": gzipped,
            "/chunked": chunked,
            "/moved": moved,
            "/target": html(links(words="the redirect's target")),
            "/missing": html("<html><body>not here</body></html>", status=404),
            "/doc.pdf": pdf,
            "/s1": html(SAME),
            "/s2": html(SAME),
        }
    )


async def test_every_answer_is_archived_whole_and_each_row_points_at_its_record(
    tmp_path: Path, db_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    warc = tmp_path / "warc"
    async with serving(the_site()) as base:
        await crawl(db_url, [base], warc=str(warc))
    assert [p.name for p in warc.iterdir() if p.name.endswith(".open")] == []
    checked = warcio_check(warc)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    records = read_records(warc)
    assert records[0].type == "warcinfo"
    info = records[0].payload.decode()
    assert "software: topical-crawler/" in info
    assert "crawler-topic: solar energy" in info
    assert "sqlite" not in info  # the database URL, which may hold a password, is not told

    answers = {r.uri.removeprefix(base.rstrip("/")): r for r in captures(records)}
    served = ["/", "/robots.txt", "/a", "/gz", "/chunked", "/moved", "/target", "/missing"]
    assert sorted(answers) == sorted([*served, "/doc.pdf", "/s1", "/s2"])
    assert twice(records) == []
    # bodies as the server sent them, the headers saying what the record holds
    assert answers["/a"].payload == links(words="solar energy page a").encode()
    assert answers["/missing"].status == 404
    assert answers["/missing"].payload == b"<html><body>not here</body></html>"
    assert answers["/moved"].status == 301
    assert answers["/moved"].payload == b"moved on"
    assert answers["/doc.pdf"].payload == PDF
    assert answers["/robots.txt"].payload == b"User-agent: *\nAllow: /\n"
    decoded = links(words="compressed solar page").encode()
    assert answers["/gz"].payload == decoded
    gz_headers = {name.lower(): value for name, value in answers["/gz"].http_headers}
    assert "content-encoding" not in gz_headers
    assert gz_headers["content-length"] == str(len(decoded))
    chunked_headers = {name.lower(): value for name, value in answers["/chunked"].http_headers}
    assert "transfer-encoding" not in chunked_headers
    assert answers["/chunked"].payload == b"<html><body><p>sent in two chunks</p></body></html>"
    # two pages with one payload: the second is a revisit naming the first
    first, second = sorted((answers["/s1"], answers["/s2"]), key=lambda r: r.offset)
    assert (first.type, second.type) == ("response", "revisit")
    assert second.headers["WARC-Profile"].endswith("/revisit/identical-payload-digest")
    assert second.headers["WARC-Refers-To"] == first.headers["WARC-Record-ID"]
    assert second.headers["WARC-Payload-Digest"] == first.headers["WARC-Payload-Digest"]
    # a request record beside every answer, naming it
    requests = {r.headers["WARC-Concurrent-To"]: r for r in records if r.type == "request"}
    for answer in captures(records):
        request = requests[answer.headers["WARC-Record-ID"]]
        assert request.uri == answer.uri
        assert ("User-Agent", "topical-crawler/0.1") in request.http_headers

    # each row knows where its capture is: the final answer of its visit
    by_place = {(r.file, r.offset): r for r in records}
    rows = await collection(db_url)
    for url, row in rows.items():
        assert row.warc_file is not None, url
        assert row.warc_offset is not None
        assert by_place[(row.warc_file, row.warc_offset)].uri == (row.final_url or url)
    assert rows[f"{base}doc.pdf"].error is None  # a body read to be kept is not an error
    assert rows[f"{base}moved"].status == 200
    # and the export carries it
    assert await asyncio.to_thread(main, ["export", "--db", db_url]) == 0
    exported = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    place = {e["url"]: (e["warc_file"], e["warc_offset"]) for e in exported}
    assert place[f"{base}a"] == (rows[f"{base}a"].warc_file, rows[f"{base}a"].warc_offset)


async def test_files_rotate_at_the_size_limit_each_with_its_warcinfo(
    tmp_path: Path, db_url: str
) -> None:
    warc = tmp_path / "warc"
    async with serving(the_site()) as base:
        await crawl(db_url, [base], warc=str(warc), warc_max_size=1, warc_prefix="topic")
    files = warc_files(warc)
    assert len(files) >= 3
    assert all(f.name.startswith("topic-") for f in files)
    assert sorted(int(f.name.split("-")[2].split(".")[0]) for f in files) == list(range(len(files)))
    checked = warcio_check(warc)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    records = read_records(warc)
    heads = {f.name: next(r for r in records if r.file == f.name) for f in files}
    assert all(r.type == "warcinfo" and r.offset == 0 for r in heads.values())
    assert len(captures(records)) == 11
    rows = await collection(db_url)
    assert {row.warc_file for row in rows.values()} <= set(heads)


async def test_a_304_is_a_revisit_record_naming_the_earlier_capture(
    tmp_path: Path, db_url: str
) -> None:
    warc = tmp_path / "warc"
    quiet = EphemeralSource(0.5, 0.7, 0.001)  # publishes about once in twenty minutes
    async with Testbed(WebSpec(pages=60, hosts=2, seed=5), sources=[quiet]) as bed:
        await crawl(
            db_url,
            bed.seeds,
            allowed_domains=tuple(bed.hostnames),
            revisit="round-robin",
            revisit_period=0.3,
            revisit_budget=1,
            duration=2.5,
            warc=str(warc),
        )
        url = bed.source_url(0)
    records = [r for r in captures(read_records(warc)) if r.uri == url]
    assert [r.status for r in records][:1] == [200]
    first, later = records[0], records[1:]
    assert len(later) >= 2
    assert {r.status for r in later} == {304}
    for record in later:
        assert record.type == "revisit"
        assert record.headers["WARC-Profile"].endswith("/revisit/server-not-modified")
        assert record.headers["WARC-Refers-To"] == first.headers["WARC-Record-ID"]
        assert record.headers["WARC-Refers-To-Target-URI"] == url
    row = (await collection(db_url))[url]
    assert (row.warc_file, row.warc_offset) == (first.file, first.offset)  # the full capture
    assert warcio_check(warc).returncode == 0


async def test_a_warc_directory_that_goes_away_stops_the_crawl_loudly(
    tmp_path: Path, db_url: str
) -> None:
    warc = tmp_path / "warc"
    async with Testbed(WebSpec(pages=400, hosts=2, seed=3)) as bed:
        running = asyncio.create_task(
            crawl(
                db_url,
                bed.seeds,
                allowed_domains=tuple(bed.hostnames),
                warc=str(warc),
                warc_max_size=1,  # a new file every batch
            )
        )
        while stored(Path(db_url.removeprefix("sqlite+aiosqlite:///"))) < 20:
            if running.done():  # say why it ended
                pytest.fail(f"the crawl ended before the directory went: {running.result()}")
            await asyncio.sleep(0.01)
        # moved away in one step: a removal file by file races the crawler's renames
        warc.rename(tmp_path / "gone")
        with pytest.raises(WarcError, match="cannot write the WARC file"):
            await asyncio.wait_for(running, 30)
    pages = await collection(db_url)
    assert len(pages) < 400  # it stopped, not finished
