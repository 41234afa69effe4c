"""Known graphs for replayed crawls, and `crawler experiment traversals` over them."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from crawler.cli import main
from crawler.reporting.ground_truth import GraphFormatError, read_graph
from testbed.graph import web_graph
from testbed.server import Testbed
from testbed.web import WebSpec

SPEC = WebSpec(pages=600, hosts=3, seed=4)


async def written_graph(directory: Path) -> None:
    async with Testbed(SPEC) as bed:
        bed.write_ground_truth(directory)


async def test_a_written_ground_truth_reads_back_as_the_testbed_graph(tmp_path: Path) -> None:
    await written_graph(tmp_path)
    read = read_graph(tmp_path)
    built = web_graph(SPEC)
    np.testing.assert_allclose(read.relevance, built.relevance, atol=1e-4)  # 4 decimals
    np.testing.assert_array_equal(read.link_start, built.link_start)
    np.testing.assert_array_equal(read.link_target, built.link_target)
    np.testing.assert_array_equal(built.seeds, [0])  # as `Testbed.seeds` crawls it
    np.testing.assert_array_equal(read.seeds, np.arange(SPEC.hosts))  # every home page
    assert len(np.unique(read.host)) == SPEC.hosts
    assert read.reachable().sum() > 0.9 * SPEC.pages


def test_the_testbed_graph_reaches_what_a_crawl_reaches() -> None:
    graph = web_graph(SPEC)
    reachable = graph.reachable()
    assert reachable[graph.seeds].all()
    # every reachable page but the seeds has a reachable page linking to it
    linked = np.zeros(graph.pages, dtype=bool)
    for page in np.flatnonzero(reachable):
        linked[graph.links_of(page)] = True
    assert (reachable == (linked | np.isin(np.arange(graph.pages), graph.seeds))).all()


def write(directory: Path, pages: str, links: str, seeds: str) -> Path:
    directory.mkdir(exist_ok=True)
    (directory / "pages.tsv").write_text(pages)
    (directory / "links.tsv").write_text(links)
    (directory / "seeds.txt").write_text(seeds)
    return directory


GOOD_PAGES = "url\trelevance\nhttp://a/\t0.1\nhttp://a/x\t0.9\nhttp://b/y\t0.5\n"
GOOD_LINKS = "src\tdst\nhttp://a/\thttp://a/x\nhttp://a/x\thttp://b/y\nhttp://a/x\thttp://c/gone\n"


def test_a_small_directory_is_read_and_unknown_pages_are_dropped(tmp_path: Path) -> None:
    graph = read_graph(write(tmp_path / "g", GOOD_PAGES, GOOD_LINKS, "http://a/\n"))
    assert graph.pages == 3
    assert graph.links == 2  # the link to an unlisted page is dropped
    assert graph.links_of(1).tolist() == [2]
    assert graph.host.tolist() == [0, 0, 1]


@pytest.mark.parametrize(
    ("pages", "links", "seeds", "message"),
    [
        (
            GOOD_PAGES.replace("0.9", "high"),
            GOOD_LINKS,
            "http://a/\n",
            r"pages.tsv:3: relevance 'high'",
        ),
        (
            GOOD_PAGES.replace("0.9", "-1"),
            GOOD_LINKS,
            "http://a/\n",
            r"pages.tsv:3: relevance '-1'",
        ),
        (
            GOOD_PAGES + "http://a/\t0.2\n",
            GOOD_LINKS,
            "http://a/\n",
            r"pages.tsv:5: http://a/ is listed twice",
        ),
        (
            GOOD_PAGES,
            "src\tdst\nhttp://a/\n",
            "http://a/\n",
            r"links.tsv:2: expected 2 tab-separated",
        ),
        (
            GOOD_PAGES,
            GOOD_LINKS,
            "http://a/\nhttp://z/\n",
            r"seeds.txt:2: http://z/ is not in pages.tsv",
        ),
        (GOOD_PAGES, GOOD_LINKS, "\n", r"seeds.txt: lists no seeds"),
        ("url\trelevance\n", GOOD_LINKS, "http://a/\n", r"pages.tsv: lists no pages"),
    ],
)
def test_bad_ground_truth_is_named_by_file_and_line(
    tmp_path: Path, pages: str, links: str, seeds: str, message: str
) -> None:
    with pytest.raises(GraphFormatError, match=message):
        read_graph(write(tmp_path / "g", pages, links, seeds))


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    directory = write(tmp_path / "g", GOOD_PAGES, GOOD_LINKS, "http://a/\n")
    (directory / "links.tsv").unlink()
    with pytest.raises(GraphFormatError, match=r"links.tsv: missing"):
        read_graph(directory)


def test_the_experiment_command_replays_traversals_of_a_directory(tmp_path: Path) -> None:
    asyncio.run(written_graph(tmp_path))
    command = [sys.executable, "-m", "crawler", "experiment", "traversals", "--graph"]
    runs = {}
    for policy in ("qlearning", "best-first"):
        done = subprocess.run(
            [*command, str(tmp_path), "--traversals", "12", "--policy", policy, "--json"],
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )
        runs[policy] = json.loads(done.stdout)
    learned, greedy = runs["qlearning"]["p_over_upper"], runs["best-first"]["p_over_upper"]
    assert len(learned) == len(greedy) == 12
    assert all(0 < ratio <= 1 for ratio in learned + greedy)
    assert len(set(greedy)) == 1  # best-first learns nothing: every traversal alike
    assert max(learned[-3:]) > greedy[0]
    assert runs["qlearning"]["links"] == runs["best-first"]["links"] > 0


def test_the_experiment_command_names_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(
            [
                "experiment",
                "traversals",
                "--graph",
                str(tmp_path),
                "--traversals",
                "2",
                "--policy",
                "bfs",
            ]
        )
    assert exit_info.value.code == 2
    assert "pages.tsv: missing" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(
            [
                "experiment",
                "traversals",
                "--graph",
                "testbed",
                "--traversals",
                "2",
                "--policy",
                "qlearning",
                "--gamma",
                "1.5",
            ]
        )
    assert "gamma=1.5" in capsys.readouterr().err
