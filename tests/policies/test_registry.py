"""One registry of every kind of policy: what it lists is what can be made, and the
settings and the command line offer exactly that."""

from __future__ import annotations

import numpy as np
import pytest

from crawler.cli import build_parser
from crawler.config import REVISIT_POLICIES, CrawlConfig
from policies import registry
from policies.frontier.qlearning.table import LearningSettings
from policies.offline.link_graph import LinkGraph
from policies.offline.traversals import run_traversals
from policies.revisit.ephemeral import plan_revisits


def test_every_kind_lists_its_policies() -> None:
    assert registry.names("frontier") == ["best-first", "bfs", "qlearning"]
    assert registry.names("pool") == ["fixed", "latency", "mdp", "mm1k"]
    assert registry.names("revisit") == ["whittle", "greedy", "round-robin"]
    assert registry.names("traversal") == ["qlearning", "best-first", "bfs", "random"]


def test_every_frontier_and_pool_policy_is_made_by_name_and_says_what_it_is() -> None:
    for name in registry.names("frontier"):
        policy = registry.make("frontier", name)
        assert policy.name == name
        assert registry.spec("frontier", name).refill_order == policy.refill_order
        assert registry.spec("frontier", name).learns == (policy.get_state() is not None)
    for name in registry.names("pool"):
        pool = registry.make("pool", name, max_fetchers=8, buffer=4)
        assert pool.name == name
    for kind in registry.KINDS:
        assert all(registry.spec(kind, name).summary for name in registry.names(kind))


def test_every_revisit_policy_chooses_within_the_budget() -> None:
    n = 5
    since = np.arange(n, dtype=np.float64)
    for name in registry.names("revisit"):
        priority = registry.spec("revisit", name).factory
        chosen = priority(
            expected=np.linspace(1, 2, n),
            alpha=np.full(n, 0.5),
            u=np.ones(n),
            cost=np.ones(n),
            since_visit=since,
        )
        assert np.asarray(chosen).shape == (n,)
        costs = np.array([1.0, 2.0, 1.0, 3.0, 1.0])
        planned = plan_revisits(
            name,
            arrival_rate=np.ones(n),
            xi=np.full(n, 0.5),
            mu=np.full(n, 0.7),
            cost=costs,
            since_visit=since,
            budget=4.0,
        )
        assert planned
        assert costs[planned].sum() <= 4.0


def test_every_traversal_policy_orders_a_known_graph() -> None:
    graph = LinkGraph.from_arrays(
        np.array([0.0, 1.0, 0.5]),
        np.array([0, 0, 1]),
        np.array([1, 2, 2]),
        np.zeros(3),
        np.array([0]),
    )
    for name in registry.names("traversal"):
        orderer = registry.make("traversal", name, graph=graph, settings=LearningSettings())
        assert orderer is not None
        report = run_traversals(graph, name, 2, settings=LearningSettings())
        assert len(report.p_over_upper) == 2
        assert all(0.0 < ratio <= 1.0 + 1e-9 for ratio in report.p_over_upper)


def test_settings_and_flags_offer_what_is_registered() -> None:
    assert set(REVISIT_POLICIES) == {*registry.names("revisit"), "off"}
    for name in registry.names("frontier"):
        assert CrawlConfig(seeds=("http://a.example/",), topic="t", policy=name).policy == name
    with pytest.raises(ValueError, match="known: best-first, bfs, qlearning"):
        registry.make("frontier", "depth-first")
    parser = build_parser()
    args = parser.parse_args(
        [
            "experiment",
            "traversals",
            "--graph",
            "testbed",
            "--traversals",
            "1",
            "--policy",
            "random",
        ]
    )
    assert args.policy == "random"
    with pytest.raises(SystemExit):
        parser.parse_args(
            ["experiment", "traversals", "--graph", "x", "--traversals", "1", "--policy", "dfs"]
        )


def test_a_name_is_registered_once() -> None:
    with pytest.raises(ValueError, match="already registered"):
        registry.register(registry.spec("pool", "mdp"))
