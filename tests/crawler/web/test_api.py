"""The daemon's API: what it reads of a crawl, its OpenAPI document, and every bad
input answered with a JSON error naming the problem."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from aiohttp import ClientSession, ClientTimeout
from openapi_spec_validator import validate

import storage
from crawler.web.page import CONTENT_SECURITY_POLICY
from crawler.web.requests import MAX_BODY
from storage.labels import load_labels
from tests.crawler.helpers import html
from tests.crawler.web.daemon import TOKEN, Daemon, chain, running_daemon, wait_for

pytestmark = pytest.mark.asyncio(loop_scope="module")

ROUTES = {
    "/": html(
        "<html><head><title>Solar panels</title></head><body><main><p>Solar panels turn "
        'sunlight into electricity.</p><a href="/wind">wind</a><a href="/cake">cake</a>'
        '<a href="/chain/0">more</a></main></body></html>'
    ),
    "/wind": html(
        "<html><head><title>Wind</title></head><body><p>Turbines make electricity from "
        "wind, solar panels from sunlight.</p></body></html>"
    ),
    "/cake": html("<html><head><title>Cake</title></head><body><p>Flour and sugar.</p></body>"),
    "/chain/{n}": chain(latency=0.05),
}
CHANGES = ["/api/v1/seeds", "/api/v1/pause", "/api/v1/resume", "/api/v1/pages/1/label"]


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def daemon(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Daemon]:
    db_url = f"sqlite+aiosqlite:///{tmp_path_factory.mktemp('api') / 'crawl.db'}"
    async with running_daemon(
        db_url, ROUTES, topic="solar panels sunlight", api_hosts=("crawler.test",)
    ) as running:

        async def found() -> bool:
            code, body = await running.call("GET", "/api/v1/search?q=sunlight")
            return code == 200 and len(body["hits"]) == 2

        await wait_for(found, "found the two pages on sunlight")
        yield running


async def test_status_says_what_the_crawl_has_done(daemon: Daemon) -> None:
    async def counted() -> bool:  # the status is read from the crawl twice a second
        return (await daemon.status())["pages"] >= 3

    await wait_for(counted, "counted the pages found")
    status = await daemon.status()
    assert status["state"] == "running"
    assert status["relevant"] >= 1
    assert status["pages_per_second"] > 0
    assert status["hosts"] == 1  # the chain's next page is always queued or under way
    assert status["frontier"] >= 0  # the chain's next page may be under way
    assert status["changes_allowed"] is True
    assert 0 < status["relevance_threshold"] < 1


async def test_search_finds_pages_with_their_ids_and_marked_snippets(daemon: Daemon) -> None:
    code, body = await daemon.call("GET", "/api/v1/search?q=sunlight+electricity&limit=5")
    assert code == 200
    assert [hit["title"] for hit in body["hits"]] == ["Solar panels", "Wind"]
    first = body["hits"][0]
    assert first["url"] == daemon.base
    assert isinstance(first["id"], int)
    assert "[sunlight]" in first["snippet"]
    assert 0 < first["relevance"] <= 1
    code, body = await daemon.call("GET", "/api/v1/search?q=sunlight&min_relevance=1")
    assert (code, body["hits"]) == (200, [])
    code, body = await daemon.call("GET", "/api/v1/search?q=sunlight&limit=1")
    assert len(body["hits"]) == 1


async def test_a_page_with_its_text_outlinks_and_fetch(daemon: Daemon) -> None:
    _, found = await daemon.call("GET", "/api/v1/search?q=sunlight")
    page_id = found["hits"][0]["id"]
    code, page = await daemon.call("GET", f"/api/v1/pages/{page_id}")
    assert code == 200
    assert (page["id"], page["url"], page["title"]) == (page_id, daemon.base, "Solar panels")
    assert "sunlight into electricity" in page["text"]
    assert page["relevance"] > 0
    assert {link["url"] for link in page["outlinks"]} == {
        daemon.base + "wind",
        daemon.base + "cake",
        daemon.base + "chain/0",
    }
    fetch = page["fetch"]
    assert (fetch["status"], fetch["error"], fetch["discovered_from"]) == (200, None, None)
    assert fetch["content_type"].startswith("text/html")
    assert fetch["content_length"] > 0
    assert fetch["fetched_at"].startswith("20")


async def test_an_unknown_page_and_route_are_404_in_json(daemon: Daemon) -> None:
    code, body = await daemon.call("GET", "/api/v1/pages/999999")
    assert code == 404
    assert body["error"] == "no page with id 999999 has been fetched"
    code, body = await daemon.call("GET", "/api/v1/nothing")
    assert code == 404
    assert "no such route: /api/v1/nothing" in body["error"]
    code, body = await daemon.call("GET", "/api/v1/pages/x1")
    assert code == 400
    assert "a page's id is a whole number" in body["error"]


async def test_the_openapi_document_is_valid_and_names_every_route(daemon: Daemon) -> None:
    code, document = await daemon.call("GET", "/api/v1/openapi.json")
    assert code == 200
    validate(document)
    described = {
        (method.upper(), path)
        for path, operations in document["paths"].items()
        for method in operations
    }
    assert {
        ("GET", "/api/v1/status"),
        ("POST", "/api/v1/seeds"),
        ("POST", "/api/v1/pause"),
        ("POST", "/api/v1/resume"),
        ("GET", "/api/v1/search"),
        ("GET", "/api/v1/pages/{id}"),
        ("POST", "/api/v1/pages/{id}/label"),
        ("GET", "/api/v1/pages"),
    } <= described
    for (method, path), operation in (
        ((method.upper(), path), operation)
        for path, operations in document["paths"].items()
        for method, operation in operations.items()
    ):
        if method == "POST":
            assert operation["security"] == [{"bearer": []}], path
            assert {"400", "401", "403"} <= operation["responses"].keys(), path


async def test_every_answer_carries_the_security_headers(daemon: Daemon) -> None:
    async with daemon.client.get(daemon.api + "/api/v1/status") as response:
        assert response.headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
        assert response.headers["X-Content-Type-Options"] == "nosniff"
    async with daemon.client.get(daemon.api + "/api/v1/nothing") as response:
        assert response.headers["X-Content-Type-Options"] == "nosniff"


@pytest.mark.parametrize("path", CHANGES)
async def test_a_change_without_a_token_or_with_a_wrong_one_is_401(
    daemon: Daemon, path: str
) -> None:
    code, body = await daemon.call("POST", path, token=None, json={"urls": [daemon.base]})
    assert code == 401
    assert "Authorization: Bearer" in body["error"]
    code, body = await daemon.call("POST", path, token="wrong" * 5, json={"urls": [daemon.base]})
    assert (code, body["error"]) == (401, "the API token is wrong")
    headers = {"Authorization": f"Basic {TOKEN}"}
    code, _ = await daemon.call("POST", path, token=None, headers=headers)
    assert code == 401
    assert (await daemon.status())["state"] == "running"


JSON = {"Content-Type": "application/json"}
BAD_BODIES: list[tuple[str, dict[str, Any], str]] = [
    ("/api/v1/seeds", {"data": b"{", "headers": JSON}, "the body is not JSON"),
    ("/api/v1/seeds", {"data": b"[" * 60_000, "headers": JSON}, "the body is not JSON"),
    ("/api/v1/seeds", {"json": ["http://a/"]}, "the body must be a JSON object, not list"),
    ("/api/v1/seeds", {"json": {"urls": ["http://a/"], "x": 1}}, "unknown field 'x'"),
    ("/api/v1/seeds", {"json": {"url": "http://a/"}}, "unknown field 'url'"),
    ("/api/v1/seeds", {"json": {}}, "the field 'urls' is missing"),
    ("/api/v1/seeds", {"json": {"urls": "http://a/"}}, "the field 'urls' must be a list"),
    ("/api/v1/seeds", {"json": {"urls": [1]}}, "the field 'urls' must be a list"),
    ("/api/v1/seeds", {"json": {"urls": []}}, "the field 'urls' must be a list of 1 to"),
    ("/api/v1/seeds", {}, "send a JSON object with 'urls'"),
    ("/api/v1/seeds", {"data": b'{"urls": []}'}, "send JSON with Content-Type"),
    ("/api/v1/pause", {"json": {"now": True}}, "unknown field 'now'"),
    ("/api/v1/resume", {"data": b"nonsense"}, "send JSON with Content-Type"),
    ("/api/v1/pages/1/label", {"json": {"relevant": "yes"}}, "'relevant' must be true or false"),
    ("/api/v1/pages/1/label", {"json": {"relevant": 1}}, "'relevant' must be true or false"),
    ("/api/v1/pages/1/label", {"json": {}}, "the field 'relevant' is missing"),
    ("/api/v1/pages/1/label", {"json": {"relevant": True, "why": "x"}}, "unknown field 'why'"),
    ("/api/v1/pages/one/label", {"json": {"relevant": True}}, "a page's id is a whole number"),
]


@pytest.mark.parametrize(("path", "body", "message"), BAD_BODIES)
async def test_a_bad_body_is_400_naming_the_problem(
    daemon: Daemon, path: str, body: dict[str, Any], message: str
) -> None:
    code, answer = await daemon.call("POST", path, **body)
    assert code == 400
    assert message in answer["error"]


@pytest.mark.parametrize("path", CHANGES)
async def test_an_oversized_body_is_400(daemon: Daemon, path: str) -> None:
    huge = {"urls": [daemon.base + "x" * 1000] * (MAX_BODY // 1000)}
    code, answer = await daemon.call("POST", path, json=huge)
    assert code == 400
    assert f"the body is larger than {MAX_BODY} bytes" in answer["error"]


BAD_QUERIES = [
    ("/api/v1/search", "q: the query '' has no words"),
    ("/api/v1/search?q=%2B%2B", "has no words to search for"),
    ("/api/v1/search?q=solar&limit=0", "limit must be between 1 and 100, not 0"),
    ("/api/v1/search?q=solar&limit=many", "limit must be a whole number, not 'many'"),
    ("/api/v1/search?q=solar&min_relevance=2", "min_relevance must be between 0 and 1"),
    ("/api/v1/search?q=solar&min_relevance=nan", "min_relevance must be between 0 and 1"),
    ("/api/v1/search?q=solar&lang=en", "unknown query parameter 'lang'"),
    ("/api/v1/search?q=solar&q=wind", "the query parameter 'q' is given more than once"),
    ("/api/v1/status?verbose=1", "unknown query parameter 'verbose'"),
    ("/api/v1/pages", "sort must be uncertain"),
    ("/api/v1/pages?sort=relevance", "sort must be uncertain, not 'relevance'"),
    ("/api/v1/pages?sort=uncertain&limit=1000", "limit must be between 1 and 100"),
]


@pytest.mark.parametrize(("path", "message"), BAD_QUERIES)
async def test_a_bad_query_is_400_naming_the_problem(
    daemon: Daemon, path: str, message: str
) -> None:
    code, answer = await daemon.call("GET", path)
    assert code == 400
    assert message in answer["error"]


async def test_a_daemon_without_a_token_refuses_every_change_with_403(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    db_url = f"sqlite+aiosqlite:///{tmp_path_factory.mktemp('open') / 'crawl.db'}"
    async with running_daemon(db_url, ROUTES, token=None) as open_daemon:
        for path in CHANGES:
            code, body = await open_daemon.call("POST", path, json={"urls": [open_daemon.base]})
            assert code == 403
            assert "started without an API token" in body["error"]
        status = await open_daemon.status()
        assert (status["state"], status["changes_allowed"]) == ("running", False)


async def test_a_method_not_allowed_is_405_in_json(daemon: Daemon) -> None:
    async with (
        ClientSession(timeout=ClientTimeout(total=5)) as client,
        client.delete(daemon.api + "/api/v1/status") as response,
    ):
        assert response.status == 405
        assert "error" in await response.json()


async def test_a_label_reaches_the_database_and_the_page_shows_it(daemon: Daemon) -> None:
    _, found = await daemon.call("GET", "/api/v1/search?q=sunlight")
    wind = next(hit["id"] for hit in found["hits"] if hit["title"] == "Wind")
    code, body = await daemon.call("POST", f"/api/v1/pages/{wind}/label", json={"relevant": False})
    assert (code, body) == (200, {"id": wind, "relevant": False})
    engine = storage.open_engine(daemon.db_url)
    try:
        labels = {label.url_id: label.relevant for label in await load_labels(engine)}
    finally:
        await engine.dispose()
    assert labels[wind] is False
    _, page = await daemon.call("GET", f"/api/v1/pages/{wind}")
    assert page["label"] is False
    code, body = await daemon.call("POST", "/api/v1/pages/999999/label", json={"relevant": True})
    assert code == 404
    assert body["error"] == "no page with id 999999 is stored with its text"


async def test_the_pages_worth_labelling_nearest_the_threshold_first(daemon: Daemon) -> None:
    code, body = await daemon.call("GET", "/api/v1/pages?sort=uncertain&limit=3")
    assert code == 200
    pages = body["pages"]
    assert 1 <= len(pages) <= 3
    margins = [page["margin"] for page in pages]
    assert margins == sorted(margins)
    assert {"id", "url", "title", "relevance", "margin"} <= pages[0].keys()


async def test_the_api_and_page_answer_only_addresses_localhost_and_the_names_given(
    daemon: Daemon,
) -> None:
    """A name a web page made resolve here (DNS rebinding) reads nothing; /metrics and
    /healthz answer any name, as Prometheus asks by a service's."""
    port = daemon.api.rsplit(":", 1)[1]
    for host in (f"localhost:{port}", f"crawler.test:{port}", f"[::1]:{port}", "127.0.0.1"):
        code, _ = await daemon.call("GET", "/api/v1/status", headers={"Host": host})
        assert code == 200, host
    for path in ("/api/v1/status", "/api/v1/search?q=sunlight", "/", "/api/v1/openapi.json"):
        code, body = await daemon.call("GET", path, headers={"Host": f"rebound.example:{port}"})
        assert code == 421, path
        assert "'rebound.example'" in body["error"]
    for path in ("/metrics", "/healthz"):
        async with daemon.client.get(
            daemon.api + path, headers={"Host": "crawler-daemon:9410"}
        ) as answer:
            assert answer.status == 200, path


async def test_a_search_answers_while_the_crawls_loop_is_held(daemon: Daemon) -> None:
    """The server and its database work run on a thread of their own: a crawl keeping
    its loop busy (here: held outright) does not hold a search up."""
    import threading
    import time
    import urllib.request

    answered: list[tuple[float, int]] = []

    def ask() -> None:
        with urllib.request.urlopen(daemon.api + "/api/v1/search?q=sunlight", timeout=10) as got:
            answered.append((time.monotonic(), got.status))

    asker = threading.Thread(target=ask)
    asker.start()
    time.sleep(0.8)  # noqa: ASYNC251 - the crawl's loop (this test's) held, as by a long page
    held_until = time.monotonic()
    asker.join(10)
    assert [status for _, status in answered] == [200]
    assert answered[0][0] < held_until
