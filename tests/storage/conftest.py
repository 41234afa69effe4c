"""A real database with the crawler's schema, for the storage tests: each test runs on
SQLite and on PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

import storage


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'crawl.db'}"
    return str(request.getfixturevalue("postgres_url"))


@pytest.fixture
async def engine(db_url: str) -> AsyncIterator[AsyncEngine]:
    engine = storage.open_engine(db_url)
    await storage.create_schema(engine)
    yield engine
    await engine.dispose()
