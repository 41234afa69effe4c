from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.postgres import PostgresServer, running_server


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite+aiosqlite:///{tmp_path / 'crawl.db'}"


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """One PostgreSQL server for the session (skipped where none can be started)."""
    with running_server() as server:
        yield server


@pytest.fixture
def postgres_url(postgres: PostgresServer) -> str:
    """A fresh database on the session's PostgreSQL server."""
    return postgres.new_database()
