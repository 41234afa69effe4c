"""bench/raise_trace.py records the families the frontier raised, what their raised
pages did, and when a family was lowered, each time it was."""

from __future__ import annotations

from policies import Candidate, LinkContext
from policies.exploration_budget import ExplorationBudget
from tests.bench.scripts import load_script


def link(url_id: int, score: float) -> Candidate:
    return Candidate(url_id, f"http://a/{url_id}", "a", 1, score, context=LinkContext())


def test_a_raised_family_is_traced_from_its_raise_to_its_lowering() -> None:
    script = load_script("raise_trace.py")
    frontier = script.TracedRaise(
        budget=ExplorationBudget(warmup=0), relative_levels=1, relatives_lowered_after=2
    )
    hub = Candidate(1, "http://a/1", "a", 0, 0.0)
    frontier.push(hub)
    assert frontier.pop(lambda host: True).url_id == 1
    family = [link(2, 0.05), *(link(i, 0.01) for i in range(3, 10))]
    frontier.on_fetched(hub, 0.0, family)
    frontier.push_many(family)
    assert frontier.pop(lambda host: True).url_id == 2
    frontier.on_fetched(family[0], 0.3, [])  # relevant: raises 3 to 9
    traced = frontier.traced[1]
    assert (traced.raised_at, traced.raised, traced.lowered) == (2, {3, 4, 5, 6, 7, 8, 9}, [])
    # 3 leads on to a new link, 4 and 5 do neither: the second miss lowers the rest
    frontier.on_fetched(family[1], 0.0, [link(30, 0.001)])
    frontier.on_fetched(family[2], 0.0, [])
    frontier.on_fetched(family[3], 0.0, [])
    assert traced.fetched == [("http://a/3", 1), ("http://a/4", 0), ("http://a/5", 0)]
    assert traced.lowered == [5]
    assert traced.longest_miss(lambda url: False) == 2
    assert traced.longest_miss(lambda url: url == "http://a/4") == 1
    # 6 is relevant by the crawl's score and raises the family again; 7 and 8 lower it
    frontier.on_fetched(family[4], 0.3, [])
    frontier.on_fetched(family[5], 0.0, [])
    frontier.on_fetched(family[6], 0.0, [])
    assert traced.lowered == [5, 8]
    assert traced.scored_relevant == 1
    assert traced.longest_miss(lambda url: False) == 5
    assert traced.longest_miss(lambda url: url == "http://a/6") == 2
