"""`python -m bench rounds` on outputs written here in the focus benchmark's JSON form:
the crawls are pooled by topic over the rounds, and a policy is compared with
best-first's crawls of the rounds it ran in. Nothing here crawls."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.bench.scripts import BENCH, load_script


@pytest.fixture(scope="module")
def pool() -> ModuleType:
    return load_script("pool_focus_rounds.py")


def printout(topic: str, crawls: dict[str, list[tuple[float, float]]]) -> str:
    """What `python -m bench focus --json` prints for one ground truth: each policy's
    runs, with their recall at 100 and 500 pages."""
    runs = {
        name: [
            {"recall@100": at_100, "recall@500": at_500, "harvest@100": 0.5, "pages": 500}
            for at_100, at_500 in recalls
        ]
        for name, recalls in crawls.items()
    }
    return json.dumps({"topic": topic, "relevant": 3, "runs": runs, "medians": {}})


def test_crawls_are_pooled_over_rounds_and_topics(pool: ModuleType) -> None:
    first = printout("git", {"best-first": [(0.2, 0.9)] * 3, "late": [(0.1, 0.9)] * 3})
    second = printout("git", {"best-first": [(0.3, 0.9)] * 2, "late": [(0.1, 1.0)] * 2})
    third = printout("sparse", {"best-first": [(0.0, 0.1)], "late": [(0.0, 0.5)]})
    crawls = pool.read_rounds([first, second, third])
    assert len(crawls) == 12
    assert {crawl.round for crawl in crawls if crawl.topic == "sparse"} == {2}
    git_late = pool.recalls(crawls, "git", "late")
    assert git_late == {100: [0.1] * 5, 500: [0.9, 0.9, 0.9, 1.0, 1.0]}
    assert pool.recalls(crawls, "git", "best-first", {1}) == {100: [0.3, 0.3], 500: [0.9, 0.9]}
    lines = pool.report(crawls)
    assert "git          late                           5 crawls  0.100 / 0.900" in lines
    assert "late: summed medians 0.10 / 1.40" in lines


def test_a_policy_is_behind_only_where_its_crawls_rank_below_best_firsts(
    pool: ModuleType,
) -> None:
    # at 100 pages every crawl of "late" is below every crawl of best-first: behind; at
    # 500 the two interleave, one crawl's median below: behind by its median alone
    best_first = [(0.30, 0.80), (0.32, 0.90), (0.31, 0.70), (0.33, 0.85), (0.30, 0.75)]
    late = [(0.10, 0.78), (0.12, 0.88), (0.11, 0.72), (0.13, 0.84), (0.10, 0.76)]
    early = [(0.50, 0.80), (0.52, 0.90), (0.51, 0.70), (0.53, 0.85), (0.50, 0.75)]
    crawls = pool.read_rounds([printout("asyncio", {"best-first": best_first, "late": late})])
    assert pool.compare(crawls, "late") == {
        "median behind": ["asyncio@100", "asyncio@500"],
        "behind": ["asyncio@100"],
        "ahead": [],
    }
    crawls = pool.read_rounds([printout("asyncio", {"best-first": best_first, "early": early})])
    assert pool.compare(crawls, "early") == {
        "median behind": [],
        "behind": [],
        "ahead": ["asyncio@100"],
    }


def test_best_first_is_compared_in_the_rounds_the_policy_ran_in(pool: ModuleType) -> None:
    # best-first crawled far better in a round without the policy: that round is left out
    with_it = printout("http", {"best-first": [(0.5, 0.8)] * 4, "same": [(0.5, 0.8)] * 4})
    without = printout("http", {"best-first": [(0.9, 0.9)] * 20})
    crawls = pool.read_rounds([with_it, without])
    assert pool.compare(crawls, "same") == {"median behind": [], "behind": [], "ahead": []}


def test_an_output_that_is_not_the_focus_benchmarks_is_refused(tmp_path: Path) -> None:
    printed = tmp_path / "round.txt"
    printed.write_text("run 1 best-first: recall@100 0.500\n")
    finished = subprocess.run(
        [sys.executable, "-m", "bench", "rounds", str(printed)],
        capture_output=True,
        text=True,
        cwd=BENCH.parent,
    )
    assert finished.returncode == 2
    assert "Expecting value" in finished.stderr
