"""A real SQLite database with the crawler's schema, for the storage tests."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

import storage


@pytest.fixture
async def engine(db_url: str) -> AsyncIterator[AsyncEngine]:
    engine = storage.open_engine(db_url)
    await storage.create_schema(engine)
    yield engine
    await engine.dispose()
