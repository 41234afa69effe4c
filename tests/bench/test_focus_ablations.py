"""bench/focus_ablations.py's `hosts-calibrated` ranks a host by what its pages earned
against what their links promised, relative to the crawl's."""

from __future__ import annotations

from policies import Candidate, LinkContext
from policies.exploration_budget import ExplorationBudget
from policies.qlearning import QLearningFrontier
from policies.site_values import SiteValues
from tests.bench.scripts import load_script


def link(url_id: int, host: str, score: float) -> Candidate:
    return Candidate(url_id, f"http://{host}/{url_id}", host, 1, score, context=LinkContext())


def first_after_fetches(frontier: QLearningFrontier) -> str:
    """Host a's links promised 0.08 and earned 0.01, host b's promised 0.02 and earned
    0.03; then a's next link promises 0.05 and b's 0.03: the host of the one popped."""
    for i in range(5):
        frontier.on_fetched(link(i, "a", 0.08), 0.01, [])
        frontier.on_fetched(link(10 + i, "b", 0.02), 0.03, [])
    frontier.push_many([link(20, "a", 0.05), link(21, "b", 0.03)])
    popped = frontier.pop(lambda host: True)
    assert popped is not None
    return popped.host


def settings() -> dict[str, object]:
    # no optimism and no sections' means: the hosts compete by their links alone
    return {
        "budget": ExplorationBudget(warmup=0),
        "host_values": SiteValues(optimism=0.0, weight=0.0),
        "section_values": SiteValues(optimism=0.0, weight=0.0),
    }


def test_a_host_whose_pages_earn_less_than_their_links_promise_yields() -> None:
    script = load_script("focus_ablations.py")
    assert first_after_fetches(QLearningFrontier(**settings())) == "a"  # type: ignore[arg-type]
    calibrated = script._HostsCalibrated(**settings())
    assert first_after_fetches(calibrated) == "b"
    # rho: a's ((0.05 + 10 * 0.02) / (0.4 + 10 * 0.05)) over the crawl's 0.2 / 0.5
    assert abs(calibrated.calibration_of("a") - (0.25 / 0.9) / 0.4) < 1e-9
    assert abs(calibrated.calibration_of("b") - (0.35 / 0.6) / 0.4) < 1e-9


def test_hosts_are_not_calibrated_through_the_warmup() -> None:
    script = load_script("focus_ablations.py")
    calibrated = script._HostsCalibrated(**{**settings(), "budget": ExplorationBudget()})
    assert first_after_fetches(calibrated) == "a"
    assert calibrated.calibration_of("a") == 1.0
