"""The web page in a real browser (Debian's chromium, driven through chromedriver by
selenium) against a daemon crawling a loopback site: a search, a page's view and its
label reaching the database, and a hostile page's title shown as text, inert."""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, TypeVar

import pytest
import pytest_asyncio

import storage
from storage.labels import load_labels
from tests.crawler.helpers import html
from tests.crawler.web.daemon import TOKEN, Daemon, chain, running_daemon, wait_for

webdriver = pytest.importorskip(
    "selenium.webdriver", reason="the browser tests need selenium: pip install -e '.[test]'"
)
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

CHROMIUM, CHROMEDRIVER = shutil.which("chromium"), shutil.which("chromedriver")
if CHROMIUM is None or CHROMEDRIVER is None:
    MISSING = (
        "the browser tests need Debian's chromium and chromium-driver "
        "(apt-get install chromium chromium-driver)"
    )
    if os.environ.get("CRAWLER_REQUIRE_DEPLOY_TOOLS"):  # CI (.ci/run) installs them
        pytest.fail(MISSING + "; CRAWLER_REQUIRE_DEPLOY_TOOLS is set", pytrace=False)
    pytest.skip(MISSING, allow_module_level=True)

pytestmark = pytest.mark.asyncio(loop_scope="module")

T = TypeVar("T")
HOSTILE = '<script>window.pwned=1</script> "><img src=x onerror="window.pwned=1">'
ROUTES = {
    "/": html(
        "<html><head><title>Solar panels</title></head><body><main><p>Solar panels turn "
        'sunlight into electricity.</p><a href="/wind">wind</a><a href="/hostile">h</a>'
        '<a href="/chain/0">more</a></main></body></html>'
    ),
    "/wind": html(
        "<html><head><title>Wind</title></head><body><p>Turbines make electricity from "
        "wind, solar panels from sunlight.</p></body></html>"
    ),
    # a title is raw text up to </title>: the page's title is HOSTILE as it is
    "/hostile": html(
        f"<html><head><title>{HOSTILE}</title></head><body><p>solar hostile "
        "&lt;script&gt;window.pwned=1&lt;/script&gt;</p></body></html>"
    ),
    "/chain/{n}": chain(latency=0.05),
}
WAIT_SECONDS = 10


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage"):
        options.add_argument(argument)
    service = webdriver.ChromeService(executable_path=CHROMEDRIVER)
    driver = webdriver.Chrome(options=options, service=service)
    try:
        yield driver
    finally:
        driver.quit()


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def daemon(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Daemon]:
    db_url = f"sqlite+aiosqlite:///{tmp_path_factory.mktemp('page') / 'crawl.db'}"
    async with running_daemon(db_url, ROUTES, topic="solar panels sunlight") as running:

        async def found() -> bool:
            code, body = await running.call("GET", "/api/v1/search?q=solar")
            return code == 200 and len(body["hits"]) == 3

        await wait_for(found, "found the three pages on solar panels")
        yield running


async def in_browser(step: Callable[[], T]) -> T:
    """A blocking browser step in a thread: the daemon answers on this loop meanwhile."""
    return await asyncio.to_thread(step)


def until(driver: Any, condition: Callable[[Any], Any]) -> Any:
    return WebDriverWait(driver, WAIT_SECONDS, poll_frequency=0.05).until(condition)


def search(driver: Any, query: str) -> list[Any]:
    box = driver.find_element(By.ID, "query")
    box.clear()
    box.send_keys(query)
    driver.find_element(By.CSS_SELECTOR, "#search-form button").click()
    return list(until(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#results li")))


async def test_search_open_a_page_and_label_it(browser: Any, daemon: Daemon) -> None:
    def steps() -> str:
        browser.get(daemon.api + "/")
        until(browser, lambda d: d.find_element(By.ID, "pages").text.isdigit())
        browser.find_element(By.ID, "token").send_keys(TOKEN)
        hits = search(browser, "sunlight electricity")
        titles = [hit.find_element(By.CSS_SELECTOR, "a").text for hit in hits]
        assert titles == ["Solar panels", "Wind"]
        marks = hits[0].find_elements(By.CSS_SELECTOR, ".snippet mark")
        assert {mark.text.lower() for mark in marks} >= {"sunlight", "electricity"}
        hits[1].find_element(By.LINK_TEXT, "Wind").click()
        until(browser, lambda d: d.find_element(By.ID, "page-title").text == "Wind")
        assert "Turbines make electricity" in browser.find_element(By.ID, "page-text").text
        assert browser.find_element(By.ID, "page-label").text == "none"
        browser.find_element(By.ID, "label-relevant").click()
        until(browser, lambda d: d.find_element(By.ID, "page-label").text == "relevant")
        return str(browser.execute_script("return window.location.hash"))

    shown = await in_browser(steps)
    page_id = int(shown.removeprefix("#page/"))
    engine = storage.open_engine(daemon.db_url)
    try:
        labels = {label.url_id: label.relevant for label in await load_labels(engine)}
    finally:
        await engine.dispose()
    assert labels == {page_id: True}


async def test_a_hostile_title_is_shown_as_text_and_runs_nothing(
    browser: Any, daemon: Daemon
) -> None:
    def steps() -> None:
        browser.get(daemon.api + "/")
        (hit,) = search(browser, "hostile")
        link = hit.find_element(By.CSS_SELECTOR, "a")
        assert link.text == HOSTILE
        link.click()
        until(browser, lambda d: d.find_element(By.ID, "page-title").text == HOSTILE)
        assert "<script>window.pwned=1</script>" in browser.find_element(By.ID, "page-text").text
        assert browser.execute_script("return typeof window.pwned") == "undefined"
        assert browser.execute_script("return document.querySelectorAll('img').length") == 0
        scripts = browser.execute_script(
            "return Array.from(document.scripts, (s) => s.getAttribute('src'))"
        )
        assert scripts == ["/static/app.js"]

    await in_browser(steps)
