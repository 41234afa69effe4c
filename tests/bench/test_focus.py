"""`python -m bench focus`: crawls of one web with ground truth, one per policy, and the
focus measured against that truth (`bench/harness.py`)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np
import pytest

from bench.focus import main
from bench.harness import CrawlSettings, TruthWeb, crawl_order, focus
from crawler.reporting.history import read_history
from crawler.reporting.report import summary
from testbed.server import Testbed
from testbed.web import WebSpec
from tests.crawler.helpers import reachable


def test_focus_reads_recall_harvest_and_pages_to_90_off_the_crawls_order() -> None:
    relevance = {f"http://a/{i}": 0.0 for i in range(1_000)} | {
        f"http://b/{i}": 0.5 for i in range(10)
    }
    web = TruthWeb(("http://a/0",), "topic", relevance, threshold=0.4)
    fetched = np.zeros(600)
    fetched[[0, 5, 50, 99, 100, 200, 300, 400, 450, 599]] = 0.5  # the ten relevant pages
    measured = focus(fetched, web, budget=1_000)
    assert measured["recall@100"] == pytest.approx(0.4)
    assert measured["harvest@100"] == pytest.approx(0.04)
    assert measured["recall@500"] == pytest.approx(0.9)
    assert measured["pages_to_90"] == 451
    assert measured["pages"] == 600
    assert measured["recall@1000"] == pytest.approx(1.0)  # the crawl ended at 600: all found
    assert 0 < measured["p_over_upper"] < 1
    assert "recall@5000" not in measured  # beyond the budget
    assert focus(np.zeros(600), web, budget=1_000)["pages_to_90"] == math.inf


def test_a_crawls_pages_and_finds_are_told_by_host() -> None:
    relevance = {f"http://a:80/{i}": 0.0 for i in range(50)}
    relevance |= {f"http://b:80/{i}": 0.5 for i in range(5)} | {"http://a:80/r": 0.5}
    relevance["http://c:80/x"] = 0.3  # below the threshold
    web = TruthWeb(("http://a:80/0",), "topic", relevance, threshold=0.4)
    assert web.relevant_by_host() == {"b:80": 5, "a:80": 1}
    order = ["http://a:80/0", "http://b:80/0", "http://c:80/x", "http://a:80/r", "http://b:80/1"]
    assert web.pages_by_host(order, budget=10) == {"a:80": (2, 1), "b:80": (2, 2), "c:80": (1, 0)}
    assert web.pages_by_host(order, budget=3) == {"a:80": (1, 0), "b:80": (1, 1), "c:80": (1, 0)}


def test_live_compares_policies_on_the_testbed_in_one_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plot = tmp_path / "curves.png"
    argv = ["--testbed", "800", "--budget", "150", "--repeat", "2"]
    argv += ["--policies", "bfs", "best-first", "--json", "--plot", str(plot)]
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report["medians"]) == {"bfs", "best-first"}
    assert [len(runs) for runs in report["runs"].values()] == [2, 2]
    for runs in report["runs"].values():
        for run in runs:  # two measures of one order agree
            first = min(100, run["pages"])
            assert run["recall@100"] == pytest.approx(
                run["harvest@100"] * first / report["relevant"]
            )
    for policy, runs in report["runs"].items():  # the median of two: their mean
        mean = sum(run["p_over_upper"] for run in runs) / 2
        assert report["medians"][policy]["p_over_upper"] == pytest.approx(mean)
    assert plot.stat().st_size > 10_000
    # where each crawl's pages went: every page on one host, every find among them
    held = report["relevant_by_host"]
    assert len(held) > 1
    assert sum(held.values()) == report["relevant"]
    for policy, runs in report["runs"].items():
        for run, hosts in zip(runs, report["hosts"][policy], strict=True):
            assert sum(pages for pages, _ in hosts.values()) == run["pages"]
            found = sum(relevant for _, relevant in hosts.values())
            assert found >= round(run["recall@100"] * report["relevant"])
            assert all(relevant <= held.get(host, 0) for host, (_, relevant) in hosts.items())


def test_live_prints_where_each_policys_pages_went(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--testbed", "800", "--budget", "60", "--policies", "bfs"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    table = out.split("where the pages went")[1].splitlines()[2:]
    rows = [line.split() for line in table if line.strip()]
    assert rows
    assert all(row[0].startswith("127.0.0.") for row in rows)
    assert sum(int(row[2]) for row in rows) == 60  # pages / found, by host
    held = [int(row[1]) for row in rows]
    assert held == sorted(held, reverse=True)  # the hosts holding most relevant pages first


@pytest.mark.slow
def test_each_run_starts_with_the_next_policy(capsys: pytest.CaptureFixture[str]) -> None:
    """A crawl's order depends on its timing, which what ran before it may change: no
    policy always takes the same turn."""
    argv = ["--testbed", "800", "--budget", "30", "--repeat", "4"]
    argv += ["--policies", "bfs", "best-first", "qlearning"]
    assert main(argv) == 0
    runs = [line.split(":")[0] for line in capsys.readouterr().out.splitlines()]
    runs = [line for line in runs if line.startswith("run ")]
    assert runs == [
        "run 1 bfs", "run 1 best-first", "run 1 qlearning",
        "run 2 best-first", "run 2 qlearning", "run 2 bfs",
        "run 3 qlearning", "run 3 bfs", "run 3 best-first",
        "run 4 bfs", "run 4 best-first", "run 4 qlearning",
    ]  # fmt: skip


def test_a_ground_truth_without_a_threshold_or_a_served_web_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "seeds.txt").write_text("http://127.0.0.1:9/\n")
    (tmp_path / "topic.txt").write_text("solar energy\n")
    (tmp_path / "pages.tsv").write_text("url\trelevance\nhttp://127.0.0.1:9/\t0.5\n")
    argv = ["--ground-truth", str(tmp_path), "--budget", "10"]
    assert main(argv) == 2
    assert "threshold.txt" in capsys.readouterr().err
    assert main([*argv, "--truth-threshold", "0.3"]) == 2
    assert "answers: is the web served?" in capsys.readouterr().err
    for bad in ("--patience=1.5", "--topic-feedback=-1", "--topic-feedback=nan"):
        with pytest.raises(SystemExit) as stopped:
            main([*argv, "--truth-threshold", "0.3", bad])
        assert stopped.value.code == 2
        assert f"{bad.split('=')[0]} must be" in capsys.readouterr().err


async def test_a_crawl_of_the_testbed_goes_to_every_host_its_links_lead_to(
    tmp_path: Path,
) -> None:
    # the testbed has one seed on one of its hosts; its pages on the others are in scope
    async with Testbed(WebSpec(pages=800, seed=0)) as bed:
        truth = {bed.page_url(page): float(bed.web.relevance[page]) for page in range(800)}
        web = TruthWeb(tuple(bed.seeds), bed.topic, truth, threshold=0.4)
        order = await crawl_order(web, "bfs", CrawlSettings(budget=2_000), tmp_path)
        linked = {bed.page_url(page) for page in reachable(bed)}
    assert len({urlsplit(url).hostname for url in linked}) > 1
    pages = {url for url in order if "/p/" in url}  # beside robots refusals and redirects
    assert pages == linked  # every page the links lead to, and no other


async def test_a_page_reached_again_through_a_redirect_is_found_once(tmp_path: Path) -> None:
    """A redirect to a page fetched already is a fetch in the crawl's order, named by the
    page it leads to: it spends a place of the budget and finds nothing new, in the
    experiments' recall and in the report's count alike."""
    async with Testbed(WebSpec(pages=800, seed=0, redirect_fraction=0.3)) as bed:
        truth = {bed.page_url(page): float(bed.web.relevance[page]) for page in range(800)}
        web = TruthWeb(tuple(bed.seeds), bed.topic, truth, threshold=0.4)
        order = await crawl_order(web, "bfs", CrawlSettings(budget=2_000), tmp_path)
    again = [i for i, url in enumerate(order) if url in order[:i]]
    relevant = {url for url in order if truth.get(url, 0.0) >= 0.4}
    assert any(order[i] in relevant for i in again)  # relevant pages among those reached again
    found = web.truth_of(order, len(order))
    assert len(found) == len(order)
    assert not found[again].any()
    assert int(np.sum(found >= 0.4)) == len(relevant)
    assert sum(hits for _, hits in web.pages_by_host(order, len(order)).values()) == len(relevant)
    within = {url for url in order[:1000] if truth.get(url, 0.0) >= 0.4}
    measured = focus(found, web, len(order))
    assert measured["recall@1000"] == pytest.approx(len(within) / web.relevant)
    assert len(order) > len(truth)  # more fetches than pages: no order does better
    assert 0 < measured["p_over_upper"] <= 1
    history = await read_history(f"sqlite+aiosqlite:///{tmp_path / 'bfs.db'}")
    assert history.urls == order
    assert summary(history, truth)["truly relevant fetched"] == len(relevant)
