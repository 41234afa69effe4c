"""Q-learning over restless bandits (O'Meara & Patel): the model, replayed traversals,
and the live frontier policy."""

from __future__ import annotations

import numpy as np
import pytest

from crawler import ground_truth
from crawler.testbed_web import WebSpec
from policies import Candidate, make_frontier_policy
from policies.link_graph import LinkGraph
from policies.qlearning import (
    FEATURES,
    DiscovererTable,
    LearningSettings,
    LinkValueModel,
    QLearningFrontier,
    first_fetch_reward,
    link_features,
    refetch_reward,
)
from policies.quality import schedule_performance, upper_bound
from policies.traversals import run_traversals


def test_the_reward_of_eq_11() -> None:
    assert first_fetch_reward(0.7) == 0.7
    assert refetch_reward(0.3, 0.5) == 0.5  # modified: the better of the two
    assert refetch_reward(0.6, 0.2) == 0.6
    assert refetch_reward(0.4, None) == 0.4  # deleted: its old relevance


def test_the_update_of_eq_10() -> None:
    table = DiscovererTable(LearningSettings(gamma=0.5, step=0.5, step_decay=0.0))
    table.update(page=3, discoverer=1, reward=0.8, revealed=2.0)
    assert table.index(3, 1) == pytest.approx(0.5 * (0.8 + 0.5 * 2.0))
    table.update(page=3, discoverer=1, reward=0.8, revealed=0.0)
    assert table.index(3, 1) == pytest.approx(0.5 * 0.9 + 0.5 * 0.8)
    assert table.index(3, 2) == 0.0  # another discoverer is another state, still zero


def test_settings_out_of_range_are_named() -> None:
    with pytest.raises(ValueError, match=r"gamma=1\.0"):
        LearningSettings(gamma=1.0)
    with pytest.raises(ValueError, match=r"epsilon=-0\.1"):
        LearningSettings(epsilon=-0.1)


def hub_graph(off_topic: int = 30, behind_hub: int = 20) -> LinkGraph:
    """A seed linking to one relevant page, a hub that looks worthless, and many
    off-topic pages that look a little better; the relevant pages sit behind the hub."""
    relevance = [0.0, 0.6, 0.01] + [0.03] * off_topic + [0.9] * behind_hub
    first_off, first_behind = 3, 3 + off_topic
    sources, targets = [], []
    for page in [1, 2, *range(first_off, first_behind)]:
        sources.append(0)
        targets.append(page)
    for page in range(first_behind, first_behind + behind_hub):
        sources.append(2)
        targets.append(page)
    n = len(relevance)
    return LinkGraph.from_arrays(
        np.array(relevance), np.array(sources), np.array(targets), np.zeros(n), np.array([0])
    )


def test_q_learning_learns_to_fetch_the_hub_that_best_first_leaves_for_last() -> None:
    graph = hub_graph()
    greedy = run_traversals(graph, "best-first", 1).p_over_upper[0]
    learned = run_traversals(graph, "qlearning", 20, seed=1).p_over_upper
    breadth = run_traversals(graph, "bfs", 1).p_over_upper[0]
    # the best any crawl can do: the seed, the hub, what is behind it, the rest
    best_order = np.array([0.0, 0.01] + [0.9] * 20 + [0.6] + [0.03] * 30)
    best = schedule_performance(best_order, best_order.sum()) / upper_bound(best_order)
    assert learned[-1] > greedy + 0.05
    assert learned[-1] == pytest.approx(best, abs=0.005)
    assert max(learned) <= 1.0 + 1e-12
    assert breadth < learned[-1]


def test_random_schedules_sit_between_nothing_and_the_upper_bound() -> None:
    graph = hub_graph()
    runs = run_traversals(graph, "random", 50, seed=3).p_over_upper
    assert min(runs) > 0.2
    assert max(runs) < 1.0
    assert len(set(runs)) > 10  # random indeed


def test_the_papers_shape_on_the_testbed() -> None:
    """Figure 3: Q-learning passes fringe greedy within about 7 traversals and reaches
    about 0.96 of the upper bound by 30."""
    graph = ground_truth.testbed_graph(WebSpec(pages=5_000))
    greedy = run_traversals(graph, "best-first", 1).p_over_upper[0]
    random = np.mean(run_traversals(graph, "random", 3).p_over_upper)
    learned = run_traversals(graph, "qlearning", 30).p_over_upper
    passed = next(number for number, ratio in enumerate(learned, 1) if ratio > greedy)
    assert random < greedy < 0.98
    assert passed <= 10
    assert np.mean(learned[-5:]) >= 0.96


def test_the_links_state_generalises_within_one_traversal() -> None:
    graph = ground_truth.testbed_graph(WebSpec(pages=3_000, seed=2))
    breadth = run_traversals(graph, "bfs", 1).p_over_upper[0]
    first = run_traversals(graph, "qlearning", 1, state="links").p_over_upper[0]
    assert first > breadth + 0.2


def test_link_features_are_one_hot_bins_in_range() -> None:
    rows = link_features(
        np.array([0.0, 0.3, 0.9]),
        np.array([np.nan, 0.05, 0.9]),
        np.array([0, 12, 500]),
        np.array([0, 3, 40]),
        np.array([0.1, 0.0, 1.0]),
    )
    assert rows.shape == (3, 5)
    assert (rows >= 0).all()
    assert (rows < FEATURES).all()
    assert (rows[:, 0] == 0).all()  # the bias
    assert len(set(rows[:, 1])) == 3  # score x parent: unknown parent is its own bin
    for column in range(1, 5):  # the groups do not overlap
        assert set(rows[:, column]).isdisjoint(rows[:, column - 1])


def test_the_link_model_starts_as_best_first_and_learns_what_links_lead_to() -> None:
    model = LinkValueModel(LearningSettings(gamma=0.5))
    hub_link, plain_link = (
        link_features(np.array(s), np.array(p), np.array(5), np.array(2), np.array(0.1))
        for s, p in ((0.02, 0.6), (0.05, 0.01))
    )
    assert model.values(hub_link, 0.02) < model.values(plain_link, 0.05)  # best-first
    relevant_children = link_features(
        np.full(10, 0.5), np.full(10, 0.01), np.full(10, 10), np.full(10, 3), np.full(10, 0.1)
    )
    for _ in range(30):
        model.update(hub_link, 0.02, model.target(0.02, relevant_children, np.full(10, 0.5)))
        model.update(plain_link, 0.05, model.target(0.05, relevant_children[:0], np.zeros(0)))
    assert model.values(hub_link, 0.02) > model.values(plain_link, 0.05)


def candidate(url_id: int, score: float, host: str = "a", depth: int = 1) -> Candidate:
    return Candidate(url_id, f"http://{host}/{url_id}", host, depth, score)


def teach(frontier: QLearningFrontier, rounds: int) -> int | None:
    """Pages from relevant parents whose links look poor lead to many relevant pages;
    links that look fair lead nowhere. The first round in which the frontier took the
    poor-looking link first, or None."""
    url_id = 1_000
    for number in range(rounds):
        parent = candidate(url_id, 0.3)
        hub, plain = candidate(url_id + 1, 0.02), candidate(url_id + 2, 0.1)
        frontier.on_fetched(parent, 0.7, [hub, plain])
        frontier.push(hub)
        frontier.push(plain)
        if frontier.pop(lambda host: True) is hub:
            return number
        frontier.on_fetched(plain, 0.02, [])
        assert frontier.pop(lambda host: True) is hub
        children = [candidate(url_id + 3 + i, 0.5) for i in range(10)]
        frontier.on_fetched(hub, 0.02, children)
        for child in children:
            frontier.push(child)
        while frontier.pop(lambda host: True) is not None:
            pass
        url_id += 100
    return None


def test_the_live_frontier_learns_to_put_hubs_first_and_keeps_it_in_its_state() -> None:
    frontier = make_frontier_policy("qlearning")
    assert isinstance(frontier, QLearningFrontier)
    flipped = teach(frontier, 40)
    assert flipped is not None  # once it has learned, the hub goes first
    assert flipped > 0  # best-first's choice, at first
    parent = candidate(1, 0.3)
    hub, plain = candidate(2, 0.02), candidate(3, 0.1)
    frontier.on_fetched(parent, 0.7, [hub, plain])
    frontier.push(plain)
    frontier.push(hub)
    assert frontier.pop(lambda host: True) is hub

    restored = QLearningFrontier()
    restored.set_state(frontier.get_state())
    np.testing.assert_allclose(restored.model.weights, frontier.model.weights)
    assert restored.model.updates == frontier.model.updates
    with pytest.raises(ValueError, match="unreadable"):
        restored.set_state(b"{not json")


def test_reranking_follows_the_model_and_keeps_hosts_apart() -> None:
    frontier = QLearningFrontier(rerank_every=1)
    frontier.push(candidate(1, 0.2, host="a"))
    frontier.push(candidate(2, 0.4, host="b"))
    frontier.push(candidate(3, 0.1, host="a"))
    due = Candidate(4, "http://a/source", "a", 0, 0.0, revisit=True)
    frontier.push(due)
    frontier.model.weights[:] = 0.0
    frontier.reprioritize()
    assert len(frontier) == 4
    assert frontier.pop(lambda host: host == "a") is due  # a re-visit stays first
    assert 4 not in frontier._features  # and is not valued as a discovery
    assert frontier.pop(lambda host: host == "a").url_id == 1
    assert frontier.pop(lambda host: True).url_id == 2
    assert frontier.pop(lambda host: True).url_id == 3
    assert frontier.pop(lambda host: True) is None
