"""A failure on one URL is that URL's outcome, never the end of the crawl.

Hypothesis writes malformed answers (status lines, headers, charsets, encodings, bodies,
robots.txt) that a raw loopback server sends as they are; every crawl must end by
itself with every URL it found recorded. A bug met on one URL is `internal_error`.
"""

from __future__ import annotations

import asyncio
import logging
import tempfile
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry

import crawler.process.processor
from tests.crawler.helpers import SEEN, collection, crawl, html, links, serving, site

PAGES = ("/p0", "/p1", "/p2")
SEED = links(*PAGES).encode()

CHARSETS = ["utf-8", "bogus-enc", "utf-7", "latin-1", "", '"utf-8', "utf-16", "x" * 80]
MEDIA = ["text/html", "text/plain", "application/xhtml+xml", "image/png", "", "text/html;;"]


@st.composite
def raw_response(draw: st.DrawFn, *, robots: bool = False) -> bytes:
    """One answer as bytes on the wire, well-formed or not."""
    status = draw(
        st.one_of(
            st.sampled_from(["200 OK", "301 Moved", "404 No", "429 Slow", "503 Down"]),
            st.integers(100, 999).map(lambda n: f"{n} X"),
            st.sampled_from(["abc", "", "200", "-1 X"]),
        )
    )
    version = draw(st.sampled_from(["HTTP/1.1", "HTTP/1.0", "HTTP/9.9", "FOO"]))
    charset = draw(st.sampled_from(CHARSETS))
    media = draw(st.sampled_from(["text/plain", *MEDIA] if robots else MEDIA))
    if robots:
        text = draw(st.sampled_from(["User-agent: *\nAllow: /\n", "Crawl-delay: abc\n", ""]))
        body = (text + draw(st.text(max_size=200))).encode("utf-8", "surrogatepass")
    else:
        body = draw(st.one_of(st.binary(max_size=400), st.just(SEED)))
    headers = [f"Content-Type: {media}; charset={charset}".encode()]
    for header in draw(
        st.lists(
            st.sampled_from(
                [
                    b"Content-Encoding: gzip",
                    b"Content-Encoding: deflate",
                    b"Content-Encoding: br",
                    b"Content-Encoding: bogus",
                    b"Transfer-Encoding: chunked",
                    b"Location: http://[::1",
                    b"Location: /p1",
                    b"Location: \xff\xfe",
                    b"Retry-After: soon",
                    b"Retry-After: 99999999999999999999",
                    b"X-Robots-Tag: \x00\x01",
                    b"ETag: \xe9",
                    b"Last-Modified: yesterday",
                    b"no colon here",
                    b": empty name",
                ]
            ),
            max_size=4,
        )
    ):
        headers.append(header)
    length = draw(st.sampled_from([len(body), len(body) + 10, 0, None]))
    if length is not None:
        headers.append(f"Content-Length: {length}".encode())
    head = f"{version} {status}".encode() + b"\r\n" + b"\r\n".join(headers)
    return head + b"\r\nConnection: close\r\n\r\n" + body


async def _serve_raw(answers: dict[str, bytes]) -> tuple[asyncio.Server, Counter[str]]:
    asked: Counter[str] = Counter()

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request = await reader.readuntil(b"\r\n\r\n")
            path = request.split(b" ", 2)[1].decode()
            asked[path] += 1
            writer.write(answers.get(path, b"HTTP/1.1 404 No\r\nContent-Length: 0\r\n\r\n"))
            await writer.drain()
        except (OSError, asyncio.IncompleteReadError, IndexError):
            pass
        finally:
            writer.close()

    return await asyncio.start_server(answer, "127.0.0.1", 0), asked


async def _crawl_malformed(answers: dict[str, bytes]) -> None:
    server, asked = await _serve_raw(answers)
    port = server.sockets[0].getsockname()[1]
    base = f"http://127.0.0.1:{port}/"
    with tempfile.TemporaryDirectory() as folder:
        db_url = f"sqlite+aiosqlite:///{Path(folder) / 'crawl.db'}"
        try:
            # a 429 or 503 doubles the host's backoff: capped, lest a few add up to a minute
            summary = await crawl(
                db_url,
                [base],
                total_timeout=1.0,
                robots_retry=0.05,
                max_retries=1,
                max_backoff=0.2,
            )
        finally:
            server.close()
            await server.wait_closed()
        assert summary.stop_reason == "frontier exhausted"
        stored = await collection(db_url)
    assert base in stored
    if stored[base].error is None:  # the seed was read: each page it links to has its row
        assert {base + path[1:] for path in PAGES} <= set(stored)
    assert all(count <= 2 for count in asked.values())  # tries, not a loop


@settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(robots=raw_response(robots=True), pages=st.tuples(*(raw_response() for _ in PAGES)))
@example(
    robots=b"HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=bogus-enc\r\n"
    b"Connection: close\r\n\r\nUser-agent: *\nAllow: /\n",
    pages=(b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=bogus-enc\r\n\r\n<p>x",) * 3,
)
def test_malformed_answers_end_as_outcomes_and_the_crawl_goes_on(
    robots: bytes, pages: tuple[bytes, ...]
) -> None:
    seed = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\n\r\n" + SEED
    answers = {"/": seed, "/robots.txt": robots, **dict(zip(PAGES, pages, strict=True))}
    asyncio.run(_crawl_malformed(answers))


async def test_a_bug_on_one_url_is_its_outcome_and_a_resumed_crawl_goes_on(
    db_url: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    analyze = crawler.process.processor.analyze

    def analyze_with_a_bug(body: bytes, *, url: str, **kwargs: object) -> object:
        if url.endswith("/p1"):
            raise RuntimeError("a bug in the parser")
        return analyze(body, url=url, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(crawler.process.processor, "analyze", analyze_with_a_bug)
    app = site({"/": html(links(*PAGES)), **{path: html(links("/more")) for path in PAGES}})
    app.router.add_get("/more", html(links()))
    registry = CollectorRegistry()
    async with serving(app) as base:  # analysed here, where the bug is patched in
        with caplog.at_level(logging.WARNING, logger="crawler.engine.engine"):
            summary = await crawl(db_url, [base], registry=registry, processors=1)
        again = await crawl(db_url, [base], processors=1)
    assert summary.stop_reason == again.stop_reason == "frontier exhausted"
    stored = await collection(db_url)
    assert stored[base + "p1"].error == "internal_error"
    assert stored[base + "p0"].error is stored[base + "more"].error is None
    fetches = "crawler_fetches_total"
    assert registry.get_sample_value(fetches, {"outcome": "internal_error"}) == 1
    assert Counter(app[SEEN].paths())["/p1"] == 1  # recorded: not fetched again on resume
    (record,) = [r for r in caplog.records if "internal error" in r.getMessage()]
    assert record.levelno == logging.WARNING
    assert record.exc_info is not None
    assert "a bug in the parser" in str(record.exc_info[1])
