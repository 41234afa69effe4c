"""A crawl learns its topic from its user's labels: labels in the database at its start,
and labels written by another connection while it runs, move the relevance of the pages
it scores after them the labelled way."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from aiohttp import web
from prometheus_client import CollectorRegistry
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

import storage
from crawler.engine import checkpoints
from tests.crawler.helpers import collection, crawl, html, serving, site

TOPIC = "solar energy"
PANELS = "Solar panels and photovoltaic cells make electricity from sunlight on a rooftop."
HEATER = "A solar water heater warms the bath water in a tank on the roof."
LATER_PANELS = "Photovoltaic cells on the rooftop: electricity from sunlight, in a battery."
LATER_HEATER = "The water heater's tank keeps the bath warm; solar heat warms the water."


def page(title: str, body: str, *hrefs: str) -> str:
    anchors = "".join(f'<p><a href="{href}">{href}</a></p>' for href in hrefs)
    return f"<html><head><title>{title}</title></head><body><p>{body}</p>{anchors}</body></html>"


LATER_PAGES = {
    "/heater2": html(page("Heater", LATER_HEATER)),
    "/panels2": html(page("Panels", LATER_PANELS)),
}


async def url_id(engine: AsyncEngine, path: str) -> int:
    async with engine.connect() as connection:
        found = await connection.execute(
            text("SELECT id FROM urls WHERE url LIKE :path"), {"path": f"%{path}"}
        )
        return int(found.scalar_one())


async def label(db_url: str, labels: dict[str, bool]) -> None:
    """Label the pages at these paths, through a connection of the test's own."""
    engine = storage.open_engine(db_url)
    try:
        for path, relevant in labels.items():
            assert await storage.save_label(engine, await url_id(engine, path), relevant)
    finally:
        await engine.dispose()


async def later_relevance(db_url: str) -> tuple[float, float]:
    pages = {url.rsplit("/", 1)[1]: record for url, record in (await collection(db_url)).items()}
    heater, panels = pages["heater2"].relevance, pages["panels2"].relevance
    assert heater is not None
    assert panels is not None
    return heater, panels


async def two_runs(tmp_path: Path, name: str, labels: dict[str, bool]) -> tuple[float, float]:
    """A first run stores a heater's page and a panels' page, the user labels them, a
    second run of the crawl scores a later heater's and panels' page."""
    db_url = f"sqlite+aiosqlite:///{tmp_path / name}"
    routes = {
        "/": html(page("Solar", "solar energy", "/heater1", "/panels1")),
        "/heater1": html(page("Heater", HEATER)),
        "/panels1": html(page("Panels", PANELS)),
        "/more": html(page("More", "solar energy", "/heater2", "/panels2")),
        **LATER_PAGES,
    }
    async with serving(site(routes)) as base:
        await crawl(db_url, [base], concurrency=1, topic=TOPIC)
        await label(db_url, labels)
        await crawl(db_url, [f"{base}more"], concurrency=1, topic=TOPIC)
    return await later_relevance(db_url)


async def test_labels_stored_before_a_run_move_the_relevance_of_its_pages(
    tmp_path: Path,
) -> None:
    heater, panels = await two_runs(tmp_path, "labelled.db", {"/heater1": False, "/panels1": True})
    unlabelled_heater, unlabelled_panels = await two_runs(tmp_path, "unlabelled.db", {})
    assert heater < unlabelled_heater
    assert panels > unlabelled_panels


@pytest.fixture(params=["sqlite", "postgresql"])
def two_db_urls(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, str]:
    """Two fresh databases of one kind: the labelled crawl's and the unlabelled one's."""
    if request.param == "sqlite":
        return tuple(f"sqlite+aiosqlite:///{tmp_path / name}" for name in ("a.db", "b.db"))  # type: ignore[return-value]
    server = request.getfixturevalue("postgres")
    return server.new_database(), server.new_database()


async def crawl_through_gate(db_url: str, *, labelled: bool) -> tuple[float, float]:
    """A crawl whose third page, asked for after a heater's page is stored, is answered
    once the heater's page is labelled not relevant by another connection and the crawl
    has learned it (or at once, unlabelled); the gate links to later pages."""
    registry = CollectorRegistry()

    async def gate(request: web.Request) -> web.StreamResponse:
        if labelled:
            await label(db_url, {"/heater1": False})
            for _ in range(500):  # the crawl looks every 0.02 s: bounded, not timed
                if registry.get_sample_value("crawler_labels") == 1:
                    break
                await asyncio.sleep(0.01)
        return await html(page("Gate", "solar energy", "/heater2", "/panels2"))(request)

    routes = {
        "/": html(page("Solar", "solar energy", "/heater1")),
        "/heater1": html(page("Heater", HEATER, "/gate")),
        "/gate": gate,
        **LATER_PAGES,
    }
    async with serving(site(routes)) as base:
        # short leases, as the cluster tests take: a shared crawl ends sooner
        shared = {"lease_seconds": 2} if db_url.startswith("postgresql") else {}
        await crawl(db_url, [base], registry=registry, concurrency=1, topic=TOPIC, **shared)
    if labelled:
        assert registry.get_sample_value("crawler_labels") == 1
    return await later_relevance(db_url)


async def test_a_label_written_during_a_crawl_moves_the_relevance_of_its_later_pages(
    two_db_urls: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(checkpoints, "GAUGE_INTERVAL", 0.01)
    monkeypatch.setattr(checkpoints, "LABEL_INTERVAL", 0.02)
    labelled_db, unlabelled_db = two_db_urls
    heater, panels = await crawl_through_gate(labelled_db, labelled=True)
    unlabelled_heater, unlabelled_panels = await crawl_through_gate(unlabelled_db, labelled=False)
    assert heater < unlabelled_heater
    assert unlabelled_heater - heater > unlabelled_panels - panels  # the heater's words fell most
