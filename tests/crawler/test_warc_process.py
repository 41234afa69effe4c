"""A crawl writing WARC files, killed with SIGKILL several times and resumed to the end."""

from __future__ import annotations

import asyncio
import random
import signal
from pathlib import Path

import pytest

from testbed.server import Testbed
from testbed.web import WebSpec
from tests.crawler.helpers import collection
from tests.crawler.test_process import run_args, wait_for_stored
from tests.crawler.warcs import captures, read_records, twice, warcio_check

# outcomes whose final_url is a redirect's target that was not fetched
NOT_FOLLOWED = {"redirect_loop", "too_many_redirects", "out_of_scope", "duplicate"}


def open_files(directory: Path) -> list[str]:
    if not directory.exists():
        return []
    return [p.name for p in directory.iterdir() if p.name.endswith(".open")]


@pytest.mark.slow
async def test_kill_9_while_archiving_then_resume_leaves_whole_files_each_url_once(
    tmp_path: Path,
) -> None:
    path, warc = tmp_path / "crawl.db", tmp_path / "warc"
    db_url = f"sqlite+aiosqlite:///{path}"
    rng = random.Random(5)
    # five kills a few milliseconds after a count of stored pages: mid-fetch, mid-write
    # of a batch's records, mid-commit, mid-rotation (a file every 200 kB or so)
    kill_points = sorted(rng.sample(range(20, 380), 5))
    archiving = ("--warc", str(warc), "--warc-max-size", "200000")
    async with Testbed(WebSpec(pages=450, hosts=3, seed=11)) as bed:
        for kill_after in kill_points:
            process = await asyncio.create_subprocess_exec(
                *run_args(bed, db_url, "--concurrency", "6", *archiving),
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.DEVNULL,
            )
            await wait_for_stored(path, kill_after, process)
            await asyncio.sleep(rng.uniform(0.0, 0.05))
            process.kill()
            assert await process.wait() == -signal.SIGKILL
            assert len(open_files(warc)) <= 1
        final = await asyncio.create_subprocess_exec(
            *run_args(bed, db_url, *archiving),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(final.communicate(), 120)
        assert final.returncode == 0, err.decode()
        assert b"stopped: frontier exhausted" in out
        served = {f"{bed.base_urls[r.host]}{r.path}" for r in bed.requests}
    assert open_files(warc) == []
    checked = await asyncio.to_thread(warcio_check, warc)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    records = await asyncio.to_thread(read_records, warc)
    assert twice(records) == []  # robots.txt included
    assert {r.uri for r in captures(records)} == served  # and every answer is there
    by_place = {(r.file, r.offset): r for r in records}
    rows = await collection(db_url)
    answered = [row for row in rows.values() if row.status is not None]
    assert len(answered) > 300
    for row in answered:
        assert row.warc_file is not None, row.url
        assert row.warc_offset is not None
        record = by_place[(row.warc_file, row.warc_offset)]
        if row.error in NOT_FOLLOWED:  # final_url names where the last redirect led
            assert record.status in (301, 302, 303, 307, 308)
        else:
            assert record.uri == (row.final_url or row.url)
