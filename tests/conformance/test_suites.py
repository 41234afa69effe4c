"""The public conformance suites (`../shared/conformance`), run as `python -m bench
conformance` runs them, held to their targets; skipped, saying so, where the files are
absent."""

from __future__ import annotations

import json

import pytest

from tests.bench.scripts import load_script

conformance = load_script("conformance.py")


def suite(name: str) -> object:
    path = conformance.DATA / name
    if not path.is_file():
        pytest.skip(f"no {path}: the conformance suites are not beside the repository")
    return json.loads(path.read_text())


def test_urls_none_wrong_none_raised_no_rejected_input_accepted() -> None:
    tally = conformance.run_urls(conformance.url_cases(suite(conformance.URL_FILE)))
    assert tally.cases > 250
    assert (tally.wrong, tally.raised, tally.rejected_accepted) == (0, 0, 0), tally.failures
    assert tally.passed + tally.by_design == tally.cases


def test_robots_txt_every_case_but_google_only_passes() -> None:
    robots = suite(conformance.ROBOTS_FILE)
    for tally in (conformance.run_robots(robots), conformance.run_user_agents(robots)):
        assert (tally.wrong, tally.raised) == (0, 0), tally.failures
        assert all(test.startswith("GoogleOnly_") for test in tally.designs)


def test_the_runner_says_which_differences_are_by_design() -> None:
    href = "http://example.com/%7ea%2f?#frag"
    assert conformance.crawler_form(href) == (
        "http://example.com/~a%2F",
        ["fragment dropped", "empty query dropped", "escapes normalised"],
    )
