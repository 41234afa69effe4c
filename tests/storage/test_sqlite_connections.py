"""What a crawl's SQLite connections hold (storage.database): not the statements of its
batches, each batch size a statement of its own (measured in a process of its own, so
that its resident size is the connection's doing), and no more connections than the
pool's, each a thread with a page cache of its own."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from sqlalchemy import event

import storage
from storage import NewUrl
from storage.database import SQLITE_CONNECTIONS

BATCHES = textwrap.dedent(
    """
    import asyncio, sys
    from sqlalchemy.ext.asyncio import create_async_engine
    import storage
    from storage import NewUrl

    def resident_mb():
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * 4096 / 2**20

    async def main(url, mode):
        if mode == "crawler":
            engine = storage.open_engine(url)
        else:  # SQLAlchemy's and sqlite3's defaults
            engine = create_async_engine(url)
        await storage.create_schema(engine)
        added, before = 0, 0.0
        for size in range(1, 301):  # the links a batch of pages makes known
            urls = [NewUrl(f"http://a.test/{added + i}", "a.test", 1, 0.5) for i in range(size)]
            async with engine.begin() as connection:
                new = await storage.add_urls(connection, urls)
            assert len(new) == size
            added += size
            if size == 30:
                before = resident_mb()
        print(resident_mb() - before)
        await engine.dispose()

    asyncio.run(main(*sys.argv[1:]))
    """
)


def growth_mb(tmp_path: Path, mode: str) -> float:
    url = f"sqlite+aiosqlite:///{tmp_path / f'{mode}.db'}"
    done = subprocess.run(
        [sys.executable, "-c", BATCHES, url, mode], capture_output=True, text=True, check=True
    )
    return float(done.stdout)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_batches_of_every_size_leave_no_statements_behind(tmp_path: Path) -> None:
    # 45,150 URLs in 300 batches of 1 to 300: the rows and SQLite's page cache (2 MB)
    assert growth_mb(tmp_path, "crawler") < 8
    # with sqlite3's cache of 128 statements, the last 128 batch sizes' programs stay
    assert growth_mb(tmp_path, "default") > 15


async def test_a_burst_of_reads_shares_the_pools_connections(tmp_path: Path) -> None:
    engine = storage.open_engine(f"sqlite+aiosqlite:///{tmp_path / 'crawl.db'}")
    await storage.create_schema(engine)
    opened = 0

    def count(*_: object) -> None:
        nonlocal opened
        opened += 1

    event.listen(engine.sync_engine, "connect", count)
    async with engine.begin() as connection:
        await storage.add_urls(connection, [NewUrl("http://a.test/", "a.test", 0, 1.0)])

    async def read() -> bool:
        async with engine.connect() as connection:
            known = await storage.is_known_done(connection, "http://a.test/")
            await asyncio.sleep(0.01)  # held while the other reads ask for theirs
            return known

    try:
        answers = await asyncio.gather(*(read() for _ in range(40)))
    finally:
        await engine.dispose()
    assert answers == [False] * 40
    # each connection a thread, a page cache and an allocator arena: no more than the
    # pool's, where SQLAlchemy's overflow would open ten more and close them again
    assert 1 <= opened <= SQLITE_CONNECTIONS
