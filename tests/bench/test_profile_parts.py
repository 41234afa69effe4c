"""The profile's attribution (`bench/profile_parts.py`): each sample goes to the part of
the innermost frame with a known file, read from py-spy's raw format. Nothing is
timed and py-spy is not run."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from tests.bench.scripts import load_script

SITE = "/usr/lib/python3/site-packages"
LOOP = "run_forever (/usr/lib/python3.11/asyncio/base_events.py:607)"


@pytest.fixture(scope="module")
def profile_parts() -> ModuleType:
    return load_script("profile_parts.py")


def stack(*frames: str) -> str:
    return ";".join(['process 1:"python bench/measure.py"', "thread (1): MainThread", *frames])


def test_the_innermost_known_frame_names_the_part(profile_parts: ModuleType) -> None:
    counting = stack(
        LOOP,
        "Processor.process (/repo/crawler/pipeline/processor.py:80)",
        "analyze (/repo/crawler/pipeline/parse.py:120)",
        "count (/repo/policies/terms.py:60)",
        "<listcomp> (/repo/policies/terms.py:62)",
    )
    assert profile_parts.part_of(counting.split(";")) == "counting terms"
    # a library's frames below ours still count for the library's part
    writing = stack(
        "WriteLoop._call (/repo/crawler/pipeline/write_loop.py:50)",
        "record_fetches (/repo/storage/writes.py:90)",
        f"do_executemany ({SITE}/sqlalchemy/engine/default.py:921)",
    )
    assert profile_parts.part_of(writing.split(";")) == "storage (writer, SQLite)"
    assert profile_parts.part_of(
        stack(LOOP, "Handle._run (/usr/lib/python3.11/asyncio/events.py:80)").split(";")
    ) == ("the event loop's own")
    assert (
        profile_parts.part_of(stack("<module> (<frozen importlib._bootstrap>:1)").split(";"))
        == "other"
    )


def test_waits_that_py_spy_samples_are_idle(profile_parts: ModuleType) -> None:
    select = stack(LOOP, "EpollSelector.select (/usr/lib/python3.11/selectors.py:468)")
    reading = stack("serve (/repo/crawler/pipeline/analysis_worker.py:66)")
    analysing = stack(
        "serve (/repo/crawler/pipeline/analysis_worker.py:78)",
        "analyze (/repo/crawler/pipeline/parse.py:111)",
    )
    assert profile_parts.is_idle(select.split(";"))
    assert profile_parts.is_idle(reading.split(";"))
    assert not profile_parts.is_idle(analysing.split(";"))
    waiting = f"_connection_worker_thread ({SITE}/aiosqlite/core.py:59)"
    assert profile_parts.is_idle(stack(waiting).split(";"))
    executing = f"Connection._execute ({SITE}/aiosqlite/core.py:100)"
    assert not profile_parts.is_idle(stack(waiting, executing).split(";"))
    assert not profile_parts.is_idle(stack(LOOP).split(";"))


def test_the_raw_profile_is_counted_by_part(profile_parts: ModuleType, tmp_path: Path) -> None:
    raw = tmp_path / "profile.raw"
    lines = [
        stack(LOOP, f"ClientSession._request ({SITE}/aiohttp/client.py:500)") + " 7",
        stack(LOOP, f"ClientResponse.read ({SITE}/aiohttp/client_reqrep.py:1100)") + " 5",
        stack(LOOP, "TopicScorer.score (/repo/policies/relevance.py:200)") + " 3",
        stack("pickle.loads (<built-in>)") + " 2",
    ]
    lines.append(
        stack("WriteLoop._call (/repo/crawler/pipeline/write_loop.py:50)").replace(
            "thread (1): MainThread", "thread (2): storage-writer"
        )
        + " 4"
    )
    lines.append(
        stack(
            f"_connection_worker_thread ({SITE}/aiosqlite/core.py:60)",
            f"Connection._execute ({SITE}/aiosqlite/core.py:100)",
        ).replace("thread (1): MainThread", "thread (3): Thread-2 (_connection_worker_thread)")
        + " 1"
    )
    worker = (
        'process 1:"python bench/measure.py";process 4:"python -m crawler.pipeline.analysis_worker"'
    )
    lines.append(f"{worker};thread (4): MainThread;analyze (/repo/crawler/pipeline/parse.py:120) 6")
    lines.append(
        f"{worker};thread (4): MainThread;serve (/repo/crawler/pipeline/analysis_worker.py:66) 9"
    )
    lines.append(stack(LOOP, "EpollSelector.select (/usr/lib/python3.11/selectors.py:468)") + " 8")
    raw.write_text("\n".join(lines) + "\n")
    parts, threads, idle = profile_parts.samples(raw)
    assert idle == 17
    assert parts == {
        "fetching (aiohttp, the visit)": 12,
        "the processor: scoring, link estimates": 3,
        "storage (writer, SQLite)": 5,
        "parsing, links, scope": 6,
        "other": 2,
    }
    assert threads == {
        "MainThread": 17,
        "storage-writer": 4,
        "(_connection_worker_thread)": 1,
        "worker: MainThread": 6,
    }
