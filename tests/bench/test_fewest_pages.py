"""`bench/realweb/fewest_pages.py` bounds the pages any crawl needs for 90% recall, from a
ground truth's graph alone."""

from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path

from crawler.reporting.ground_truth import read_graph
from tests.bench.scripts import BENCH, load_script

fewest = load_script("realweb/fewest_pages.py")


def write_truth(directory: Path, relevant: list[str], links: list[tuple[str, str]]) -> Path:
    """A ground truth of pages named by letters on one host, 'S' its seed."""
    pages = sorted({page for link in links for page in link})
    directory.mkdir()
    (directory / "pages.tsv").write_text(
        "url\trelevance\n"
        + "".join(f"http://a/{p}\t{0.5 if p in relevant else 0.0}\n" for p in pages)
    )
    (directory / "links.tsv").write_text(
        "src\tdst\n" + "".join(f"http://a/{s}\thttp://a/{d}\n" for s, d in links)
    )
    (directory / "seeds.txt").write_text("http://a/S\n")
    (directory / "topic.txt").write_text("compost\n")
    (directory / "threshold.txt").write_text("0.4\n")
    return directory


def hub_and_far_page(tmp_path: Path) -> Path:
    """From the seed: a hub of eight relevant pages, one relevant page, and a tenth
    relevant page five pages away. 90% is nine, and the cheapest crawl takes the seed,
    the hub, its eight and the one: eleven pages."""
    hub = [f"R{i}" for i in range(1, 9)]
    links = [("S", "H"), *(("H", r) for r in hub), ("S", "R9")]
    links += [("S", "A"), ("A", "B"), ("B", "C"), ("C", "D"), ("D", "R10")]
    return write_truth(tmp_path / "web", [*hub, "R9", "R10"], links)


def test_both_bounds_meet_at_the_cheapest_crawl(tmp_path: Path) -> None:
    truth = hub_and_far_page(tmp_path)
    graph = read_graph(truth)
    relevant = graph.relevance >= 0.4
    need = fewest.pages_needed(int(relevant.sum()))
    assert need == 9
    assert fewest.at_least(graph, relevant, need) == 11
    order = fewest.omniscient_order(graph, relevant, need)
    assert len(order) == 11
    assert int(relevant[order].sum()) == 9


def test_the_omniscient_order_is_a_crawl_from_the_seeds(tmp_path: Path) -> None:
    """Each page it takes is a seed or linked from a page taken before; none twice."""
    truth = hub_and_far_page(tmp_path)
    graph = read_graph(truth)
    relevant = graph.relevance >= 0.4
    order = fewest.omniscient_order(graph, relevant, int(relevant.sum()))  # all ten
    assert len(order) == len(set(order)) == 16  # every page: the far one needs its path
    for at, page in enumerate(order):
        linked = {int(t) for p in order[:at] for t in graph.links_of(p)}
        assert page in set(graph.seeds.tolist()) | linked


def test_a_path_through_relevant_pages_costs_only_its_other_pages(tmp_path: Path) -> None:
    """Nine relevant pages in a chain behind two that are not: at least 9 + 2."""
    chain = [f"R{i}" for i in range(1, 10)]
    links = [("S", "X"), ("X", "R1"), *itertools.pairwise(chain)]
    graph = read_graph(write_truth(tmp_path / "web", chain, links))
    relevant = graph.relevance >= 0.4
    assert fewest.at_least(graph, relevant, 9) == 11
    assert len(fewest.omniscient_order(graph, relevant, 9)) == 11


def test_relevant_pages_no_crawl_reaches_are_said_so(tmp_path: Path) -> None:
    links = [("S", "A"), ("B", "R1"), ("S", "R2")]
    graph = read_graph(write_truth(tmp_path / "web", ["R1", "R2"], links))
    relevant = graph.relevance >= 0.4
    assert fewest.at_least(graph, relevant, 2) == fewest.UNREACHED
    order = fewest.omniscient_order(graph, relevant, 2)  # R2 alone, by its path
    assert int(relevant[order].sum()) == 1
    assert len(order) == 2


def test_the_command_prints_a_row_a_ground_truth(tmp_path: Path) -> None:
    truth = hub_and_far_page(tmp_path)
    printed = subprocess.run(
        [sys.executable, str(BENCH / "realweb" / "fewest_pages.py"), "--ground-truth", str(truth)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "| web | 16 | 10 | 9 | 11 | 11 |" in printed.splitlines()
