"""A page's language: detected from its main text, stored and exported; `--language`
keeps the crawl to pages in those languages, storing the others with their language and
following none of their links (counted at a loopback server)."""

from __future__ import annotations

from pathlib import Path

import pytest

from crawler.config import ConfigError, CrawlConfig
from crawler.languages import LANGUAGES
from crawler.process.language import _identifier, detect_language
from tests.crawler.helpers import SEEN, collection, crawl, html, serving, site

ENGLISH = (
    "Solar panels turn the light of the sun into electricity. A house with panels on its "
    "roof uses the power it makes during the day and sells what it does not need."
)
GERMAN = (
    "Solarmodule wandeln das Licht der Sonne in elektrischen Strom um. Ein Haus mit "
    "Modulen auf dem Dach verbraucht den Strom, den es am Tag erzeugt, und verkauft den Rest."
)
JAPANESE = (
    "太陽光パネルは太陽の光を電気に変えます。屋根にパネルのある家は、昼間に作った電気を使い、"
    "使わなかった電気を売ります。"
)


def test_the_language_of_a_text_is_its_iso_639_1_code() -> None:
    assert detect_language(ENGLISH) == "en"
    assert detect_language(GERMAN) == "de"
    assert detect_language(JAPANESE) == "ja"


def test_too_little_text_has_no_language() -> None:
    assert detect_language("") is None
    assert detect_language("Solar energy") is None


def test_the_codes_checked_at_start_are_the_models_two_letter_codes() -> None:
    assert {code for code in _identifier().labels if len(code) == 2} == LANGUAGES


def test_an_unknown_language_code_is_an_error_at_start_naming_it() -> None:
    with pytest.raises(ConfigError, match=r"'languages'.*'xx'"):
        CrawlConfig(languages=("en", "xx"))


def page(text: str, *links: str) -> str:
    anchors = "".join(f'<a href="{href}">solar energy</a>' for href in links)
    body = f"<main><p>{text}</p></main>{anchors}"
    return f"<html><head><title>solar</title></head><body>{body}</body></html>"


async def test_a_page_in_another_language_is_stored_as_such_and_its_links_not_followed(
    tmp_path: Path,
) -> None:
    app = site(
        {
            "/": html(page(ENGLISH, "/de", "/en")),
            "/de": html(page(GERMAN, "/de/more")),
            "/en": html(page(ENGLISH + " More on panels.", "/en/more")),
            "/de/more": html(page(GERMAN)),
            "/en/more": html(page(ENGLISH + " Even more.")),
        }
    )
    db = f"sqlite+aiosqlite:///{tmp_path / 'crawl.db'}"
    async with serving(app) as base:
        await crawl(db, [base], languages=("en",))
    pages = await collection(db)
    assert pages[f"{base}de"].language == "de"
    assert pages[f"{base}de"].relevance is not None  # stored and scored all the same
    assert pages[f"{base}en"].language == "en"
    paths = app[SEEN].paths()
    assert "/en/more" in paths
    assert "/de/more" not in paths
    assert f"{base}de/more" not in pages


async def test_without_languages_every_page_is_followed_and_its_language_recorded(
    tmp_path: Path,
) -> None:
    app = site({"/": html(page(GERMAN, "/more")), "/more": html(page(GERMAN + " Mehr."))})
    db = f"sqlite+aiosqlite:///{tmp_path / 'crawl.db'}"
    async with serving(app) as base:
        await crawl(db, [base])
    pages = await collection(db)
    assert pages[f"{base}more"].language == "de"


async def test_the_model_is_loaded_before_the_first_request_not_on_the_crawls_loop(
    tmp_path: Path,
) -> None:
    """Loading it takes a second of CPU or more on a busy machine: at the first page
    analysed on the event loop, every visit and the API would wait for it."""
    from aiohttp import web

    loaded_at_first_page: list[int] = []

    async def first(_request: web.Request) -> web.Response:
        loaded_at_first_page.append(_identifier.cache_info().currsize)
        return web.Response(text=page(ENGLISH), content_type="text/html")

    _identifier.cache_clear()  # as in a crawler's own process
    db = f"sqlite+aiosqlite:///{tmp_path / 'crawl.db'}"
    async with serving(site({"/": first})) as base:
        await crawl(db, [base])
    assert loaded_at_first_page == [1]
