"""A crawl's WARC files in the tools web archives use: cdxj-indexer and pywb's replay."""

from __future__ import annotations

import asyncio
import gzip
import json
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from aiohttp import web

from tests.crawler.helpers import crawl, html, links, serving, site
from tests.crawler.warcs import captures, read_records, tool, warc_files

PAGE = links("/gz", "/s1", "/s2", "/moved", words="solar energy front page")
COMPRESSED = links(words="a compressed page on solar energy")
SAME = "<html><body><p>two pages, one payload</p></body></html>"


async def gzipped(_request: web.Request) -> web.Response:
    return web.Response(
        body=gzip.compress(COMPRESSED.encode()),
        content_type="text/html",
        headers={"Content-Encoding": "gzip"},
    )


def the_site() -> web.Application:
    return site(
        {
            "/": html(PAGE),
            "/gz": gzipped,
            "/s1": html(SAME),
            "/s2": html(SAME),
            "/moved": html("", status=301, headers={"Location": "/"}),
        }
    )


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def wayback(root: Path, port: int) -> Iterator[str]:
    """pywb's server on loopback over the collections under `root`."""
    with subprocess.Popen(
        [tool("wayback"), "-p", str(port), "-b", "127.0.0.1", "-d", str(root)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    ) as server:
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while True:
                assert server.poll() is None, server.stderr.read().decode() if server.stderr else ""
                try:
                    with urllib.request.urlopen(base + "/", timeout=2):
                        break
                except (urllib.error.URLError, ConnectionError):
                    assert time.monotonic() < deadline, "pywb did not start"
                    time.sleep(0.2)
            yield base
        finally:
            server.terminate()
            server.wait(timeout=30)


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *_args: object, **_kwargs: object) -> None:
        return None  # a replayed redirect is an answer to look at, not to follow


def replayed(url: str) -> tuple[int, bytes]:
    request = urllib.request.Request(url, headers={"Accept-Encoding": "identity"})
    opener = urllib.request.build_opener(_NoRedirects)
    try:
        with opener.open(request, timeout=30) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        with error:
            return error.code, error.read()


def timestamp(warc_date: str) -> str:
    return "".join(c for c in warc_date if c.isdigit())[:14]


async def crawled(tmp_path: Path, db_url: str) -> tuple[str, Path]:
    warc = tmp_path / "warc"
    async with serving(the_site()) as base:
        await crawl(db_url, [base], warc=str(warc))
    return base, warc


async def test_cdxj_indexer_indexes_every_capture(tmp_path: Path, db_url: str) -> None:
    base, warc = await crawled(tmp_path, db_url)
    done = await asyncio.to_thread(
        subprocess.run,
        [tool("cdxj-indexer"), *map(str, warc_files(warc))],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = [line.split(" ", 2) for line in done.stdout.splitlines()]
    indexed = {json.loads(fields)["url"]: json.loads(fields) for _key, _ts, fields in lines}
    assert set(indexed) == {f"{base}{p}" for p in ("", "robots.txt", "gz", "s1", "s2", "moved")}
    assert indexed[f"{base}moved"]["status"] == "301"
    assert indexed[f"{base}gz"]["mime"] == "text/html"


async def test_pywb_replays_a_crawled_page_byte_for_byte(tmp_path: Path, db_url: str) -> None:
    base, warc = await crawled(tmp_path, db_url)
    root = tmp_path / "pywb"
    root.mkdir()
    for command in (["init", "crawl"], ["add", "crawl", *map(str, warc_files(warc))]):
        done = await asyncio.to_thread(
            subprocess.run,
            [tool("wb-manager"), *command],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
    dates = {r.uri: timestamp(r.headers["WARC-Date"]) for r in captures(read_records(warc))}
    with wayback(root, free_port()) as replay:

        def fetch(path: str) -> tuple[int, bytes]:
            url = f"{base}{path}"
            return replayed(f"{replay}/crawl/{dates[url]}id_/{url}")

        # id_: the capture as it was archived, not rewritten for the browser
        assert await asyncio.to_thread(fetch, "") == (200, PAGE.encode())
        assert await asyncio.to_thread(fetch, "gz") == (200, COMPRESSED.encode())
        # a revisit record (the same payload as /s1) is replayed from its original
        for path in ("s1", "s2"):
            assert await asyncio.to_thread(fetch, path) == (200, SAME.encode())
        status, _ = await asyncio.to_thread(fetch, "moved")
        assert status == 301
