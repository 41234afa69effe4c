"""The web page's files: served by the daemon with the security headers, shipped in the
package, and free of inline script and style (which the policy would refuse)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from aiohttp import ClientSession, ClientTimeout

from crawler.web.page import CONTENT_SECURITY_POLICY, FILES, static_file
from tests.crawler.helpers import html
from tests.crawler.web.daemon import chain, running_daemon

STATIC = Path(__file__).parents[3] / "crawler" / "web" / "static"


async def test_the_page_and_its_files_are_served_with_the_policy(db_url: str) -> None:
    # a chain without end: the crawl (and its server) outlives the requests
    routes = {
        "/": html('<html><head><title>A</title></head><body><a href="/chain/0">on</a></body>'),
        "/chain/{n}": chain(),
    }
    async with (
        running_daemon(db_url, routes) as daemon,
        ClientSession(timeout=ClientTimeout(total=5)) as client,
    ):
        for path, (name, content_type) in FILES.items():
            async with client.get(daemon.api + path) as response:
                assert response.status == 200
                assert response.content_type == content_type
                assert response.headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
                assert response.headers["X-Content-Type-Options"] == "nosniff"
                assert await response.read() == static_file(name)


def test_the_html_holds_no_inline_script_style_or_outside_asset() -> None:
    page = (STATIC / "index.html").read_text()
    for script in re.findall(r"<script\b[^>]*>(.*?)</script>", page, re.S):
        assert script == ""
    assert re.search(r"<script\b(?![^>]*\bsrc=\"/static/)", page) is None
    assert "<style" not in page
    assert " style=" not in page
    assert re.search(r"\bon[a-z]+=", page) is None  # event handler attributes
    assert "http://" not in page
    assert "https://" not in page


def test_the_script_never_parses_text_as_markup() -> None:
    script = (STATIC / "app.js").read_text()
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
        assert sink not in script


def test_every_file_of_the_page_is_package_data() -> None:
    pyproject = tomllib.loads((Path(__file__).parents[3] / "pyproject.toml").read_text())
    patterns = pyproject["tool"]["setuptools"]["package-data"]["crawler.web"]
    shipped = {path.name for pattern in patterns for path in STATIC.parent.glob(pattern)}
    assert {name for name, _ in FILES.values()} <= shipped
    assert {path.name for path in STATIC.iterdir()} <= shipped
