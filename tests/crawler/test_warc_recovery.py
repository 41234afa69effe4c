"""WARC files a killed crawl left open: cut back to what committed, closed, or left alone."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from crawler.fetch.exchange import Exchange
from crawler.store.warc_files import CaptureGroup, WarcArchive
from tests.crawler.warcs import captures, read_records, warcio_check

WRITER = """
import json, os, signal, sys
from pathlib import Path
from tests.crawler.test_warc_recovery import archive, group
batches, crawl_id = int(sys.argv[2]), sys.argv[3]
writing = archive(Path(sys.argv[1]), crawl_id)
ends = [writing.write([group(f"/{b}/{i}") for i in range(3)]).committed for b in range(batches)]
print(json.dumps(ends), flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def exchange(path: str) -> Exchange:
    body = f"<html><body>page {path}</body></html>".encode()
    return Exchange(
        url=f"http://127.0.0.1:8080{path}",
        robots=False,
        requested_at=1_700_000_000.0,
        request_target=path,
        request_headers=(("Host", "127.0.0.1:8080"), ("User-Agent", "testbot/1.0")),
        http_version="1.1",
        status=200,
        reason="OK",
        headers=(("Content-Type", "text/html"), ("Content-Length", str(len(body)))),
        body=body,
        truncated=False,
        decoded=False,
    )


def group(path: str) -> CaptureGroup:
    return CaptureGroup([exchange(path)])


def archive(directory: Path, crawl_id: str) -> WarcArchive:
    return WarcArchive(directory, prefix="crawl", info={"software": "test"}, crawl_id=crawl_id)


def killed_writer(directory: Path, batches: int, crawl_id: str = "ours") -> list[dict[str, int]]:
    """Write batches in a process of its own, then kill it with SIGKILL; the committed
    length after each batch."""
    directory.mkdir(exist_ok=True)
    done = subprocess.run(
        [sys.executable, "-c", WRITER, str(directory), str(batches), crawl_id],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=Path(__file__).parents[2],
    )
    assert done.returncode == -signal.SIGKILL, done.stderr
    ends: list[dict[str, int]] = json.loads(done.stdout)
    return ends


def open_files(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".open"))


def test_an_open_file_is_cut_back_to_its_committed_length_and_closed(tmp_path: Path) -> None:
    ends = killed_writer(tmp_path, 3)
    ((name, committed),) = ends[1].items()  # the third batch's rows never committed
    assert open_files(tmp_path) == [name + ".open"]
    closed = archive(tmp_path, "ours").recover({name: committed})
    assert closed == [name]
    assert open_files(tmp_path) == []
    assert (tmp_path / name).stat().st_size == committed
    assert warcio_check(tmp_path).returncode == 0
    kept = [r.uri.removeprefix("http://127.0.0.1:8080") for r in captures(read_records(tmp_path))]
    assert kept == ["/0/0", "/0/1", "/0/2", "/1/0", "/1/1", "/1/2"]


def test_an_open_file_no_row_committed_to_is_removed(tmp_path: Path) -> None:
    killed_writer(tmp_path, 2)
    assert archive(tmp_path, "ours").recover({}) == []
    assert list(tmp_path.iterdir()) == []


def test_another_crawls_open_file_is_left_alone(tmp_path: Path) -> None:
    killed_writer(tmp_path, 2, crawl_id="theirs")
    before = open_files(tmp_path)
    assert archive(tmp_path, "ours").recover({}) == []
    assert open_files(tmp_path) == before


def test_a_file_a_live_process_writes_is_left_alone(tmp_path: Path) -> None:
    live = archive(tmp_path, "ours")
    written = live.write([group("/a")])
    ((name, committed),) = written.committed.items()
    assert archive(tmp_path, "ours").recover({name: 0}) == []
    live.write([group("/b")])  # it goes on writing, nothing cut from under it
    live.close()
    assert (tmp_path / name).stat().st_size > committed
    assert warcio_check(tmp_path).returncode == 0
    assert [r.uri[-2:] for r in captures(read_records(tmp_path))] == ["/a", "/b"]


def test_a_file_shorter_than_committed_keeps_its_whole_records(tmp_path: Path) -> None:
    ends = killed_writer(tmp_path, 2)
    ((name, committed),) = ends[-1].items()
    path = tmp_path / (name + ".open")
    os.truncate(path, committed - 100)  # the last record (a request) lost its tail
    assert archive(tmp_path, "ours").recover({name: committed}) == [name]
    assert warcio_check(tmp_path).returncode == 0
    records = read_records(tmp_path)
    kept = [r.uri.removeprefix("http://127.0.0.1:8080") for r in captures(records)]
    assert kept == ["/0/0", "/0/1", "/0/2", "/1/0", "/1/1", "/1/2"]
    assert len([r for r in records if r.type == "request"]) == 5


def test_a_file_killed_before_its_warcinfo_is_removed(tmp_path: Path) -> None:
    (tmp_path / "crawl-20260101000000000-00000.warc.gz.open").touch()
    assert archive(tmp_path, "ours").recover({}) == []
    assert list(tmp_path.iterdir()) == []


def test_a_failed_crawls_file_is_let_go_and_recovered_by_the_next_run(tmp_path: Path) -> None:
    failed = archive(tmp_path, "ours")
    ((name, committed),) = failed.write([group("/a")]).committed.items()
    failed.write([group("/b")])  # its rows never committed: the crawl failed
    failed.release()
    assert open_files(tmp_path) == [name + ".open"]
    assert archive(tmp_path, "ours").recover({name: committed}) == [name]
    assert [r.uri[-2:] for r in captures(read_records(tmp_path))] == ["/a"]
