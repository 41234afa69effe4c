"""`crawler report`: the timeline a crawl keeps, its history read back, and the report."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from prometheus_client import CollectorRegistry

from crawler.cli import main
from crawler.fetch.politeness import Politeness
from crawler.reporting.collection import status
from crawler.reporting.history import harvest_rate, read_ground_truth, read_history
from crawler.reporting.report import summary, write_report
from crawler.telemetry.metrics import CrawlerMetrics
from crawler.telemetry.timeline import Timeline
from testbed.server import Testbed
from testbed.web import WebSpec
from tests.crawler.helpers import crawl, html, links, serving, site

DELAY = 0.02
SPEC = WebSpec(pages=400, hosts=2, seed=3)


@pytest.fixture
async def crawled(tmp_path: Path, db_url: str) -> tuple[str, Path]:
    """A crawl in two runs (a restart between them), and the web's ground truth."""
    truth = tmp_path / "truth"
    async with Testbed(SPEC) as bed:
        bed.write_ground_truth(truth)
        for _run in range(2):
            await crawl(
                db_url, bed.seeds, allowed_domains=tuple(bed.hostnames), max_pages=60, delay=DELAY
            )
    return db_url, truth


def test_harvest_rate_is_the_running_share_of_relevant_pages() -> None:
    assert harvest_rate(np.array([1, 0, 1, 1])) == pytest.approx([1, 0.5, 2 / 3, 0.75])


def test_a_timeline_sample_reads_the_metrics_and_politeness_since_the_last() -> None:
    registry = CollectorRegistry()
    metrics = CrawlerMetrics(registry, version="test")
    polite = Politeness(delay=1.0)
    timeline = Timeline(registry, polite, run=123.0)
    metrics.pages_stored.inc(7)
    metrics.fetchers_target.set(12)
    metrics.fetches_by_use.labels(use="revisit").inc(2)
    for now in (0.0, 5.0):
        polite.start("a", now)
        polite.finish("a", now)
    first = timeline.sample(1000.0).values
    assert first["run"] == 123.0
    assert first["stored"] == 7
    assert first["fetchers_target"] == 12
    assert first["budget"] == {"revisit": 2, "discovery": 0}
    assert first["politeness"] == {"a": [2, 2.0]}
    # nothing asked since: no host in the next sample
    assert timeline.sample(1005.0).values["politeness"] == {}
    polite.start("a", 10.0)
    polite.finish("a", 10.0)
    assert timeline.sample(1010.0).values["politeness"] == {"a": [1, 1.0]}


async def test_the_history_holds_every_page_once_and_every_run(
    crawled: tuple[str, Path],
) -> None:
    db_url, _truth = crawled
    history = await read_history(db_url)
    assert len(history.urls) == 120
    assert np.all(np.diff(history.fetched_at) >= 0)
    assert sum(history.outcomes.values()) == 120
    runs = {sample.values["run"] for sample in history.timeline}
    assert len(runs) == 2
    # each run's last sample counts what that run stored
    last_of_run = {sample.values["run"]: sample.values["stored"] for sample in history.timeline}
    assert sorted(last_of_run.values()) == [60, 60]
    # as each run saves its last sample, its visits are over: the writer, the test's own
    # tasks and the testbed's connections are left, no visit task
    last_tasks = {sample.values["run"]: sample.values["tasks"] for sample in history.timeline}
    assert all(2 <= tasks <= 10 for tasks in last_tasks.values())
    for sample in history.timeline:
        assert sample.values["resident_bytes"] > 2**20
        assert sample.values["open_fds"] > 2
    # one host at a time, a success each: closed exactly the delay after every response
    requests = sum(waits.requests for waits in history.host_waits.values())
    assert 120 <= requests <= 140  # robots.txt and redirect hops are requests too
    for waits in history.host_waits.values():
        assert waits.closed_seconds == pytest.approx(waits.requests * DELAY)


async def test_the_report_draws_every_figure_and_the_ground_truth(
    crawled: tuple[str, Path], tmp_path: Path
) -> None:
    db_url, truth_dir = crawled
    history = await read_history(db_url)
    truth = read_ground_truth(truth_dir)
    facts = summary(history, truth)
    assert facts["URLs visited"] == 120
    assert facts["pages fetched"] == (await status(db_url)).pages
    assert facts["runs"] == 2
    fetched_truth = history.truth(truth)
    assert facts["truly relevant fetched"] == int(np.sum(fetched_truth >= 0.4)) > 0
    assert 0 < facts["P / upper bound"] <= 1

    page = tmp_path / "report.html"
    assert write_report(history, page, truth=truth) == [page]
    text = page.read_text()
    assert text.count("<img ") == 5
    assert "P / upper bound" in text
    assert not page.with_name("report.html.partial").exists()

    written = write_report(history, tmp_path / "plots")
    assert {path.name for path in written} == {
        "harvest.png",
        "relevance.png",
        "outcomes.png",
        "politeness.png",
        "controllers.png",
    }
    for path in written:
        assert path.read_bytes().startswith(b"\x89PNG")


def test_report_from_the_command_line_and_its_errors(
    crawled: tuple[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db_url, truth_dir = crawled
    out = tmp_path / "r.html"
    args = ["report", "--db", db_url, "--out", str(out), "--ground-truth", str(truth_dir)]
    assert main(args) == 0
    assert str(out) in capsys.readouterr().out
    assert out.stat().st_size > 10_000

    bad = tmp_path / "pages.tsv"
    bad.write_text("url\trelevance\nhttp://a/\tlots\n")
    with pytest.raises(SystemExit) as refused:
        main([*args[:5], "--ground-truth", str(bad)])
    assert refused.value.code == 2
    assert f"{bad}:2" in capsys.readouterr().err

    missing = f"sqlite+aiosqlite:///{tmp_path}/none.db"
    with pytest.raises(SystemExit) as stopped:
        main(["report", "--db", missing, "--out", str(out)])
    assert stopped.value.code == 1
    assert "no crawl database" in capsys.readouterr().err
    assert not (tmp_path / "none.db").exists()


async def test_any_host_name_a_crawl_can_hold_is_drawn_as_text(db_url: str, tmp_path: Path) -> None:
    """A host label is text: `$_$` would be mathematics to matplotlib, and a syntax
    error there."""
    hostile = ["$_$", "$x_{2}$", "a$b$c", "_$_"]  # no `^`: the URL Standard refuses it in a host
    routes = {"/": html(links(*(f"http://{name}.localhost/" for name in hostile)))}
    async with serving(site(routes)) as base:
        await crawl(
            db_url,
            [base],
            allowed_domains=("127.0.0.1", "localhost"),
            robots_retry=0.05,
            max_retries=1,
        )
    history = await read_history(db_url)
    drawn = {host for host in history.host_waits if "$" in host}
    assert len(drawn) == len(hostile)  # each host named in the politeness figure
    out = tmp_path / "report.html"
    assert write_report(history, out) == [out]
    assert out.read_text().count("<img ") == 5
