"""What the engine's parts stand on in their tests: the crawl's schema in a SQLite file,
fresh metrics, and a clock the test moves."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from prometheus_client import CollectorRegistry
from sqlalchemy.ext.asyncio import AsyncEngine

import storage
from crawler.telemetry.metrics import CrawlerMetrics
from tests.crawler.engine.helpers import Clock


@pytest.fixture
async def db(db_url: str) -> AsyncIterator[AsyncEngine]:
    engine = storage.open_engine(db_url)
    await storage.create_schema(engine)
    yield engine
    await engine.dispose()


@pytest.fixture
def metrics() -> CrawlerMetrics:
    return CrawlerMetrics(CollectorRegistry(), version="test")


@pytest.fixture
def clock() -> Clock:
    return Clock()
