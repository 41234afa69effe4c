"""The `crawler` command: flags and config, export, status, and their errors."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import logging
import re
import sys
from pathlib import Path

import pytest
from aiohttp import ClientConnectorError, ClientSession
from prometheus_client import CollectorRegistry

import storage
from crawler.cli import build_parser, config_from_args, main
from crawler.config import CrawlConfig
from crawler.reporting.collection import export
from crawler.service import run_crawl
from testbed.demo import free_port
from testbed.server import Testbed
from testbed.web import WebSpec
from tests.crawler.helpers import crawl, html, links, serving, site, stored
from tests.crawler.test_process import run_args, wait_for_stored

ISO_UTC_MICROSECONDS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$")


@pytest.fixture
async def crawled(db_url: str) -> str:
    async with Testbed(WebSpec(pages=200, hosts=2, seed=1)) as bed:
        await crawl(db_url, bed.seeds, allowed_domains=tuple(bed.hostnames), max_pages=60)
    return db_url


def test_flags_override_the_config_file_and_files_add_seeds_and_topic(tmp_path: Path) -> None:
    config_file = tmp_path / "crawl.toml"
    config_file.write_text('seeds = ["http://a.example/"]\ntopic = "wind"\ndelay = 5\n')
    seeds_file = tmp_path / "seeds.txt"
    seeds_file.write_text("# seeds\nhttp://b.example/\n\nhttp://c.example/\n")
    topic_file = tmp_path / "topic.html"
    topic_file.write_text("<html><script>x()</script><body>solar panels</body></html>")
    args = build_parser().parse_args(
        [
            "run",
            "--config",
            str(config_file),
            "--seeds-file",
            str(seeds_file),
            "--topic-file",
            str(topic_file),
            "--delay",
            "0.5",
            "--policy",
            "bfs",
        ]
    )
    config = config_from_args(args)
    assert config.seeds == ("http://b.example/", "http://c.example/")
    assert config.topic.split() == ["solar", "panels"]
    assert (config.delay, config.policy) == (0.5, "bfs")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run", "--topic", "x"], "'seeds' give at least one seed"),
        (
            ["run", "--seed", "http://a.example/", "--topic", "x", "--concurrency", "0"],
            "'concurrency' must be greater than 0",
        ),
        (["run", "--seed", "ftp://a.example/", "--topic", "x"], "is not a crawlable URL"),
        (["run", "--seed", "http://127.0.0.1:9/", "--topic", "x"], "--allow-private-networks"),
        (
            ["run", "--seed", "http://a.example/", "--topic", "x", "--policy", "dfs"],
            "'policy' must be one of best-first, bfs",
        ),
        (["export", "--db", "sqlite+aiosqlite:///nowhere/crawl.db"], "no crawl database"),
        (["status", "--db", "nonsense"], "no crawl database at 'nonsense'"),
        (["status", "--db", "mysql://root@db/crawl"], "bad database URL"),
    ],
)
def test_bad_input_is_a_clear_error_naming_what_is_wrong(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code != 0
    assert message in capsys.readouterr().err


async def test_export_jsonl_has_every_field_in_the_promised_form(crawled: str) -> None:
    out = io.StringIO()
    count = await export(crawled, out)
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    assert count == len(rows) == 60
    expected = {
        "url",
        "final_url",
        "host",
        "status",
        "content_type",
        "relevance",
        "title",
        "depth",
        "discovered_from",
        "fetched_at",
        "fetch_count",
        "error",
    }
    assert all(expected <= set(row) for row in rows)
    assert all(ISO_UTC_MICROSECONDS.match(row["fetched_at"]) for row in rows)
    assert all(row["relevance"] is None or 0.0 <= row["relevance"] <= 1.0 for row in rows)
    assert rows[0]["depth"] == 0
    assert rows[0]["discovered_from"] is None
    assert all(row["discovered_from"] for row in rows[1:])


async def test_export_csv_and_min_relevance(crawled: str) -> None:
    everything, relevant = io.StringIO(), io.StringIO()
    await export(crawled, everything, fmt="csv")
    await export(crawled, relevant, fmt="csv", min_relevance=0.1)
    all_rows = list(csv.DictReader(io.StringIO(everything.getvalue())))
    relevant_rows = list(csv.DictReader(io.StringIO(relevant.getvalue())))
    assert len(all_rows) == 60
    assert 0 < len(relevant_rows) < len(all_rows)
    assert all(float(row["relevance"]) >= 0.1 for row in relevant_rows)


def test_export_to_a_file_and_status_as_json(
    crawled: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "out.jsonl"
    assert main(["export", "--db", crawled, "--out", str(target)]) == 0
    assert len(target.read_text().splitlines()) == 60
    assert not (tmp_path / "out.jsonl.partial").exists()
    capsys.readouterr()
    assert main(["status", "--db", crawled, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["visited"] == 60
    assert report["pages"] + report["redirects_to_fetched"] + sum(report["errors"].values()) == 60
    assert report["frontier"] > 0
    assert report["hosts"] == 2
    assert 0 < report["relevant_pages"] < report["pages"]
    assert main(["status", "--db", crawled]) == 0
    assert "relevant pages" in capsys.readouterr().out


async def test_status_shows_a_source_never_seen_to_change_at_zero_changes_a_second(
    db_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    db = storage.open_engine(db_url)
    try:
        await storage.create_schema(db)
        async with db.begin() as connection:
            (queued,) = await storage.add_urls(
                connection, [storage.NewUrl("http://a.test/", "a.test", 0, 0.5)]
            )
            source = storage.SourceRecord(
                queued.id, queued.url, "a.test", 0, 0.0, visits=4, items=2, exposure=400.0
            )
            await storage.save_sources(connection, [source])
    finally:
        await db.dispose()
    assert await asyncio.to_thread(main, ["status", "--db", db_url]) == 0
    header, row = capsys.readouterr().out.splitlines()[-2:]
    assert header.split()[:2] == ["new/s", "changes/s"]
    assert row.split()[:2] == ["0.005", "0.000"]


@pytest.mark.slow
async def test_export_works_while_a_crawl_is_writing(tmp_path: Path) -> None:
    path = tmp_path / "crawl.db"
    db_url = f"sqlite+aiosqlite:///{path}"
    async with Testbed(WebSpec(pages=2000, hosts=3)) as bed:
        process = await asyncio.create_subprocess_exec(
            *run_args(bed, db_url, "--max-pages", "800"),
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
        await wait_for_stored(path, 20, process)
        counts = []
        while process.returncode is None and len(counts) < 20:
            out = io.StringIO()
            counts.append(await export(db_url, out))
            await asyncio.sleep(0.05)
        await asyncio.wait_for(process.wait(), 60)
    assert process.returncode == 0
    assert counts == sorted(counts)
    assert counts[-1] > counts[0]  # the crawl went on while we read
    assert stored(path) == 800


async def test_metrics_and_health_are_served_during_a_crawl(db_url: str) -> None:
    port = free_port()
    async with Testbed(WebSpec(pages=800, hosts=2)) as bed:
        config = CrawlConfig(
            seeds=tuple(bed.seeds),
            topic=bed.topic,
            db=db_url,
            delay=0.0,
            max_pages=300,
            allow_private_networks=True,
            allowed_domains=tuple(bed.hostnames),
            metrics_port=port,
        )
        crawling = asyncio.create_task(
            run_crawl(config, registry=CollectorRegistry(), handle_signals=False)
        )
        async with ClientSession() as session:
            while True:
                assert not crawling.done()
                try:
                    async with session.get(f"http://127.0.0.1:{port}/metrics") as response:
                        text = await response.text()
                except ClientConnectorError:  # not listening yet
                    text = ""
                if 'crawler_fetches_total{outcome="ok"}' in text and (
                    'outcome="ok"} 0.0' not in text
                ):
                    break
                await asyncio.sleep(0.05)
            async with session.get(f"http://127.0.0.1:{port}/healthz") as response:
                assert response.status == 200
                assert (await response.json())["status"] == "ok"
        await crawling
    assert response.headers["Content-Type"].startswith("application/json")
    for name in (
        "crawler_fetches_total",
        "crawler_response_bytes_total",
        "crawler_pages_stored_total",
        "crawler_relevant_pages_total",
        "crawler_fetch_duration_seconds_bucket",
        "crawler_page_relevance_bucket",
        "crawler_frontier_size",
        "crawler_fetches_in_flight",
        "crawler_hosts_waiting_politeness",
        "crawler_build_info",
    ):
        assert name in text
    assert "host=" not in text  # no per-host labels


async def test_a_daemon_logs_progress_lines(db_url: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="crawler.service")
    async with Testbed(
        WebSpec(pages=300, hosts=2),
    ) as bed:
        await crawl(
            db_url,
            bed.seeds,
            allowed_domains=tuple(bed.hostnames),
            delay=0.02,
            progress_interval=0.2,
            max_pages=60,
        )
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("progress:")]
    assert lines
    assert re.search(r"pages \d+ +relevant \d+ +frontier \d+", lines[-1])


def test_the_console_script_prints_its_version() -> None:
    import subprocess

    result = subprocess.run(
        [sys.executable, "-m", "crawler", "--version"], capture_output=True, text=True, check=True
    )
    assert result.stdout.startswith("crawler 0.1.0")


def test_no_frontier_loads_scikit_learn() -> None:
    """The crawl command and its service do not hold scikit-learn (some 50 MB), not even
    once the Q-learning frontier is made: its link model hashes with mmh3."""
    import subprocess

    script = (
        "import sys\n"
        "from crawler.cli import build_parser\n"
        "from crawler.service import make_frontier_policy\n"
        "build_parser()\n"
        "make_frontier_policy('best-first')\n"
        "print('sklearn' in sys.modules)\n"
        "make_frontier_policy('qlearning')\n"
        "print('sklearn' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.split() == ["False", "False"]


def test_every_setting_can_be_given_as_a_flag() -> None:
    from crawler.config import setting_names

    run = build_parser()._subparsers._group_actions[0].choices["run"]  # type: ignore[union-attr]
    destinations = {action.dest for action in run._actions}
    assert set(setting_names()) <= destinations


def test_plan_fetchers_reports_the_static_and_dynamic_pools(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = [
        "plan",
        "fetchers",
        "--arrival-rate",
        "0.05",
        "--service-rate",
        "1",
        "--buffer",
        "10",
        "--gamma",
        "0.4",
    ]
    assert main([*argv, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "static_fetchers": 17,
        "static_cost": pytest.approx(0.10220, abs=5e-6),
    }
    assert main([*argv, "--dynamic", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["dynamic_cost"] == pytest.approx(0.08308, abs=1e-4)
    assert (report["min_active"], round(report["mean_active"], 1)) == (5, 16.2)
    assert report["iterations"] > 100
    assert main([*argv, "--dynamic"]) == 0
    text = capsys.readouterr().out
    assert "static: 17 fetchers, cost 0.10220" in text
    assert "dynamic, at most 17 fetchers: cost 0.0830" in text


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (["--buffer", "1"], "the buffer K must hold at least 2 pages"),
        (["--arrival-rate", "0"], "the arrival rate must be a positive number"),
        (["--service-rate", "-2"], "the service rate must be a positive number"),
        (["--dynamic", "--max-fetchers", "0"], "at least one fetcher"),
    ],
)
def test_plan_fetchers_refuses_bad_parameters(
    changes: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    values = {"--arrival-rate": "0.1", "--service-rate": "1", "--buffer": "5", "--gamma": "1"}
    argv = ["plan", "fetchers"]
    for flag, value in values.items():
        if flag not in changes:
            argv += [flag, value]
    with pytest.raises(SystemExit) as exit_info:
        main(argv + changes)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


@pytest.fixture
def example_sources(tmp_path: Path) -> Path:
    path = tmp_path / "sources.csv"
    path.write_text("xi,mu,Lambda\n1.0,0.7,250\n0.7,0.35,250\n0.2,0.7,250\n0.08,0.21,250\n")
    return path


def test_simulate_sources_reports_the_papers_example(
    example_sources: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["simulate", "sources", "--sources", str(example_sources), "--budget", "1"]
    assert main([*argv, "--periods", "61", "--policy", "whittle", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["average_reward"] == pytest.approx(254.66, abs=0.005)
    assert report["crawls_per_source"] == [31, 30, 0, 0]
    assert main([*argv, "--periods", "100", "--policy", "best", "--start", "u"]) == 0
    assert "average reward a period: 179.79 over 100" in capsys.readouterr().out
    assert (
        main(
            [
                *argv,
                "--periods",
                "400",
                "--policy",
                "round-robin",
                "--stochastic",
                "--observe",
                "all",
                "--seed",
                "1",
                "--json",
            ]
        )
        == 0
    )
    assert json.loads(capsys.readouterr().out)["crawls_per_source"] == [100] * 4
    # the learning scheme, seeded, is reproducible
    learning = [*argv, "--periods", "300", "--policy", "lspe", "--seed", "5", "--json"]
    assert main(learning) == 0
    first = json.loads(capsys.readouterr().out)
    assert main(learning) == 0
    assert json.loads(capsys.readouterr().out) == first
    assert 0 < first["average_reward"] < 260.39


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("xi,mu\n1,2\n", "must start with the header xi,mu,Lambda"),
        ("xi,mu,Lambda\n1,0.5\n", "line 2 has 2 values, the header names 3"),
        ("xi,mu,Lambda\n1,zero,3\n", "line 2: could not convert"),
        ("xi,mu,Lambda,C\n1,0.5,3,0\n", "line 2: a source's cost must be a positive number"),
        ("xi,mu,Lambda\n", "lists no sources"),
    ],
)
def test_simulate_sources_refuses_a_bad_file(
    tmp_path: Path, content: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "sources.csv"
    path.write_text(content)
    with pytest.raises(SystemExit) as exit_info:
        main(
            [
                "simulate",
                "sources",
                "--sources",
                str(path),
                "--budget",
                "1",
                "--periods",
                "5",
                "--policy",
                "whittle",
            ]
        )
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


async def test_run_on_a_database_of_a_newer_version_is_an_error_that_writes_nothing(
    crawled: str, capsys: pytest.CaptureFixture[str]
) -> None:
    db = storage.open_engine(crawled)
    try:
        async with db.begin() as connection:
            await storage.set_meta(connection, {"schema_version": "999"})
        async with db.connect() as connection:
            before = await storage.crawl_status(connection, relevance_threshold=0.1)
    finally:
        await db.dispose()
    argv = ["run", "--db", crawled, "--seed", "http://127.0.0.1:9/", "--topic", "solar energy"]
    with pytest.raises(SystemExit) as stopped:
        await asyncio.to_thread(main, [*argv, "--allow-private-networks", "--metrics-port", "0"])
    assert stopped.value.code == 1
    assert "made by a newer version of the crawler (schema 999)" in capsys.readouterr().err
    db = storage.open_engine(crawled)
    try:
        async with db.connect() as connection:
            meta = await storage.get_meta(connection)
            after = await storage.crawl_status(connection, relevance_threshold=0.1)
    finally:
        await db.dispose()
    assert meta["schema_version"] == "999"
    assert (after.pages, after.frontier) == (before.pages, before.frontier)  # no seed added


async def test_export_csv_writes_no_live_formula(db_url: str) -> None:
    """A spreadsheet runs a cell that begins with =, +, - or @ (OWASP's CSV injection):
    such a cell is written with a leading quote in CSV, and as it is in JSON lines."""
    titles = ['=HYPERLINK("http://evil.example/","click")', "+1+1", "-2+3", "@SUM(A1:A2)"]
    pages = {
        f"/p{i}": html(f"<title>{title}</title><p>solar</p>") for i, title in enumerate(titles)
    }
    async with serving(site({"/": html(links(*pages)), **pages})) as base:
        await crawl(db_url, [base])
    table, lines = io.StringIO(), io.StringIO()
    await export(db_url, table, fmt="csv")
    await export(db_url, lines)
    written = {row["url"]: row["title"] for row in csv.DictReader(io.StringIO(table.getvalue()))}
    read = {row["url"]: row["title"] for row in map(json.loads, lines.getvalue().splitlines())}
    for i, title in enumerate(titles):
        url = f"{base}p{i}"
        assert written[url] == "'" + title
        assert read[url] == title
    assert written[base] == read[base]  # an ordinary cell as it is
