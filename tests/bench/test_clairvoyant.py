"""The clairvoyant frontier of `bench/clairvoyant.py` ranks a queued URL by its page's true
relevance, not by its link's score; its crawls of what nginx serves are run in
`tests/bench/test_realweb.py`."""

from __future__ import annotations

from pathlib import Path

import pytest

from policies.frontier import Candidate
from tests.bench.scripts import load_script

clairvoyant = load_script("clairvoyant.py")


def test_it_takes_the_truly_relevant_page_first_whatever_its_link_promised() -> None:
    truth = {"http://a/relevant": 0.4, "http://a/promising": 0.01, "http://b/other": 0.2}
    frontier = clairvoyant.Clairvoyant(truth)
    frontier.push(Candidate(1, "http://a/promising", "a", 1, 0.9))
    frontier.push(Candidate(2, "http://a/relevant", "a", 1, 0.0))
    frontier.push(Candidate(3, "http://b/other", "b", 1, 0.5))
    frontier.push(Candidate(4, "http://b/unknown", "b", 1, 0.8))  # not in the truth: 0
    taken = []
    while (candidate := frontier.pop(lambda host: True)) is not None:
        taken.append(candidate.url_id)
    assert taken == [2, 3, 1, 4]


def test_the_median_of_pages_to_90_says_when_most_crawls_did_not_reach_it() -> None:
    inf = float("inf")
    assert clairvoyant.pages_to_90([{"pages_to_90": v} for v in (900, 120, 1500)]) == (
        "900 (120, 900, 1,500)"
    )
    assert clairvoyant.pages_to_90([{"pages_to_90": v} for v in (inf, 120, inf)]) == (
        "not reached (120, none, none)"
    )


def test_lookahead_adds_half_the_best_linked_page_to_a_page_of_its_own(tmp_path: Path) -> None:
    (tmp_path / "pages.tsv").write_text(
        "url\trelevance\nhttp://a/\t0.0\nhttp://a/hub\t0.02\nhttp://a/x\t0.4\nhttp://a/y\t0.1\n"
    )
    (tmp_path / "links.tsv").write_text(
        "src\tdst\nhttp://a/\thttp://a/hub\nhttp://a/\thttp://a/y\n"
        "http://a/hub\thttp://a/x\nhttp://a/hub\thttp://a/y\nhttp://a/hub\thttp://a/gone\n"
    )
    (tmp_path / "seeds.txt").write_text("http://a/\n")
    values = clairvoyant.lookahead_values(tmp_path)
    assert values == pytest.approx(
        {"http://a/": 0.05, "http://a/hub": 0.22, "http://a/x": 0.4, "http://a/y": 0.1}
    )
    # the hub to a relevant page comes before a relevant page that leads nowhere
    frontier = clairvoyant.Clairvoyant(values)
    frontier.push(Candidate(1, "http://a/y", "a", 1, 0.9))
    frontier.push(Candidate(2, "http://a/hub", "a", 1, 0.0))
    assert frontier.pop(lambda host: True).url_id == 2
