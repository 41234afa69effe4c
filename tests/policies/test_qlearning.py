"""Q-learning over restless bandits (O'Meara & Patel): the model, replayed traversals,
and the live frontier policy."""

from __future__ import annotations

import itertools
import json
import tarfile
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from policies import BestFirst, Candidate, LinkContext, make_frontier_policy
from policies.frontier import HEADS_SLACK, PriorityFrontier
from policies.frontier.qlearning.exploration_budget import ExplorationBudget
from policies.frontier.qlearning.frontier import QLearningFrontier
from policies.frontier.qlearning.link_families import LinkFamilies
from policies.frontier.qlearning.link_model import LinkContextModel, Row, sgd_steps
from policies.frontier.qlearning.link_tokens import link_tokens
from policies.frontier.qlearning.settings import QLearningSettings
from policies.frontier.qlearning.site_values import SectionSkill, SiteValues, section_of
from policies.frontier.qlearning.table import (
    DiscovererTable,
    LearningSettings,
    first_fetch_reward,
    refetch_reward,
)
from policies.offline.link_graph import LinkGraph
from policies.offline.quality import schedule_performance, upper_bound
from policies.offline.traversals import run_traversals
from testbed.graph import web_graph
from testbed.web import WebSpec
from tests.realhtml import ARCHIVE


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
    graph = web_graph(WebSpec(pages=5_000))
    greedy = run_traversals(graph, "best-first", 1).p_over_upper[0]
    random = np.mean(run_traversals(graph, "random", 3).p_over_upper)
    learned = run_traversals(graph, "qlearning", 30).p_over_upper
    passed = next(number for number, ratio in enumerate(learned, 1) if ratio > greedy)
    assert random < greedy < 0.98
    assert passed <= 10
    assert np.mean(learned[-5:]) >= 0.96


def test_the_links_state_generalises_within_one_traversal() -> None:
    graph = web_graph(WebSpec(pages=3_000, seed=2))
    breadth = run_traversals(graph, "bfs", 1).p_over_upper[0]
    first = run_traversals(graph, "qlearning", 1, state="links").p_over_upper[0]
    assert first > breadth + 0.2


def test_link_tokens_split_words_by_field_and_weigh_each_field_as_one() -> None:
    tokens = dict(
        link_tokens(
            url="http://h/api/java/lang/GarbageCollectorMXBean.html",
            host="h",
            depth=2,
            anchor="GarbageCollectorMXBean",
            around="",
            parent_title="Memory management",
            parent_relevance=None,
        )
    )
    assert {"a=garbage", "a=collector", "a=mx", "u=java", "u=garbage", "t=memory"} <= set(tokens)
    assert tokens["h=h"] == 1.0
    assert tokens["p=seed"] == 1.0
    assert sum(v**2 for k, v in tokens.items() if k.startswith("a=")) == pytest.approx(1.0)
    assert not any(k.startswith("c=") for k in tokens)  # an empty field adds nothing


def test_the_link_model_is_best_first_until_it_predicts_better_than_the_score() -> None:
    model = LinkContextModel(n_features=2**10)
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(50)]

    def features(n: int) -> list[Row]:
        return model.features([[(str(rng.choice(words)), 1.0)] for _ in range(n)])

    rows, scores = features(20), rng.random(20)
    np.testing.assert_array_equal(model.index(rows, scores), scores)
    for _ in range(300):  # targets the words cannot predict: noise around the score
        model.update(features(1)[0], 0.5, 0.5 + rng.normal(0, 0.1))
    assert model.skill() < 0.1
    np.testing.assert_allclose(model.index(rows, scores), scores, atol=0.05)


def test_a_links_features_are_scikit_learns_feature_hashers() -> None:
    """The model hashes links' tokens as `FeatureHasher(input_type="pair",
    alternate_sign=False)` does, without loading scikit-learn: the same columns and
    values on links of a real site's pages and names beyond ASCII; the second time a
    name comes, from the model's memory. With 64 columns, names that hash alike are
    added up as it adds them, up to the last bits where three or more meet (it adds
    them in the order its sort leaves them)."""
    from sklearn.feature_extraction import FeatureHasher

    rng = np.random.default_rng(5)
    with tarfile.open(ARCHIVE) as archive:  # a real site's pages, markup and all
        pages = [member for member in archive.getmembers() if member.name.endswith(".html")]
        words = " ".join(
            archive.extractfile(page).read()[:4000].decode(errors="replace")  # type: ignore[union-attr]
            for page in pages[:40]
        ).split()
    tokens = [
        link_tokens(
            url=f"http://docs.example/{'/'.join(rng.choice(words, 2))}.html",
            host=f"docs{i % 3}.example",
            depth=int(rng.integers(0, 12)),
            anchor=" ".join(rng.choice(words, 3)),
            around=" ".join(rng.choice(words, 20)),
            parent_title="Café — naïve Ærø 東京 déjà",
            parent_relevance=None if i % 7 == 0 else float(rng.random() / 4),
        )
        for i in range(400)
    ]
    tokens.append([("h=a", 1.0), ("h=a", 0.5), ("zero", 0.0)])  # a name twice; a zero
    for n_features, exact in ((2**18, True), (2**6, False)):
        model = LinkContextModel(n_features=n_features)
        expected = FeatureHasher(
            n_features=n_features, input_type="pair", alternate_sign=False
        ).transform(tokens)
        for _ in range(2):
            rows = model.features(tokens)
            assert len(rows) == expected.shape[0]
            for (indices, values), start, stop in zip(
                rows, expected.indptr[:-1], expected.indptr[1:], strict=True
            ):
                assert indices.dtype == np.int32
                assert values.dtype == np.float64
                np.testing.assert_array_equal(indices, expected.indices[start:stop])
                if exact:
                    np.testing.assert_array_equal(values, expected.data[start:stop])
                else:
                    np.testing.assert_allclose(values, expected.data[start:stop], rtol=1e-14)
    assert model.features([]) == []


def test_the_link_models_step_is_scikit_learns_sgd_step() -> None:
    """The same rows in the same order, batch after batch: the weights of scikit-learn's
    `SGDRegressor.partial_fit` (squared error, L2 penalty, constant rate, unshuffled)."""
    from sklearn.feature_extraction import FeatureHasher
    from sklearn.linear_model import SGDRegressor

    model = LinkContextModel(n_features=2**10)
    hasher = FeatureHasher(n_features=2**10, input_type="pair", alternate_sign=False)
    reference = SGDRegressor(
        penalty="l2",
        alpha=0.2,
        learning_rate="constant",
        eta0=0.3,
        fit_intercept=False,
        shuffle=False,
    )  # a ridge and a step that show: the decay compounds over the batches
    weights = np.zeros(model.n_features)
    rng = np.random.default_rng(1)
    words = [f"w{i}" for i in range(40)]
    for _ in range(6):
        tokens = [
            [(str(word), float(rng.random())) for word in rng.choice(words, 5, replace=False)]
            for _ in range(8)
        ]
        targets = rng.normal(0.0, 1.0, 8)
        sgd_steps(weights, model.features(tokens), targets, step=0.3, ridge=0.2)
        reference.partial_fit(hasher.transform(tokens), targets)
    assert np.count_nonzero(weights) > 30
    np.testing.assert_allclose(weights, reference.coef_, rtol=1e-9, atol=1e-12)


def candidate(
    url_id: int,
    score: float,
    host: str = "a",
    depth: int = 1,
    anchor: str = "",
    section: str = "",
) -> Candidate:
    context = LinkContext(anchor=anchor)
    url = f"http://{host}/{section}{url_id}"
    return Candidate(url_id, url, host, depth, score, context=context)


def popped_id(
    frontier: PriorityFrontier, ready: Callable[[str], bool] = lambda host: True
) -> int | None:
    """The id of the URL the frontier hands out next: the Q-learning frontier hands back
    a queued link without its words, so its pops are compared by id."""
    popped = frontier.pop(ready)
    return None if popped is None else popped.url_id


def teach(frontier: QLearningFrontier, rounds: int) -> int | None:
    """Pages from relevant parents whose links look poor lead to many relevant pages;
    links that look fair lead nowhere. The first round in which the frontier took the
    poor-looking link first, or None."""
    url_id = 1_000
    for number in range(rounds):
        parent = candidate(url_id, 0.3)
        hub = candidate(url_id + 1, 0.02, anchor="chapters")
        plain = candidate(url_id + 2, 0.1, anchor="see also")
        frontier.on_fetched(parent, 0.7, [hub, plain])
        frontier.push(hub)
        frontier.push(plain)
        if popped_id(frontier) == hub.url_id:
            return number
        frontier.on_fetched(plain, 0.02, [])
        assert popped_id(frontier) == hub.url_id
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
    hub, plain = candidate(2, 0.02, anchor="chapters"), candidate(3, 0.1, anchor="see also")
    frontier.on_fetched(parent, 0.7, [hub, plain])
    frontier.push(plain)
    frontier.push(hub)
    assert popped_id(frontier) == hub.url_id

    restored = QLearningFrontier()
    restored.set_state(frontier.get_state())
    np.testing.assert_allclose(restored.model.weights_, frontier.model.weights_)
    assert restored.model.updates_ == frontier.model.updates_
    assert restored.model.skill() == frontier.model.skill() > 0
    with pytest.raises(ValueError, match="unreadable"):
        restored.set_state(b"{not json")


def test_a_queued_link_is_held_by_its_features_not_its_words() -> None:
    """A link's words are read at its push; the queue holds it without them, and ranking
    it again values it by the features they gave."""
    frontier = QLearningFrontier()
    assert teach(frontier, 40) is not None
    while frontier.pop(lambda host: True) is not None:
        pass
    # found on a relevant page, as in its lessons
    hub = replace(candidate(9_001, 0.02, anchor="chapters"), parent_relevance=0.7)
    plain = replace(candidate(9_002, 0.1, anchor="see also"), parent_relevance=0.7)
    frontier.push(plain)
    frontier.push(hub)
    assert frontier.reprioritize_host("a") == 2
    popped = frontier.pop(lambda host: True)
    assert popped is not None
    assert (popped.url_id, popped.context) == (hub.url_id, None)


def test_a_state_saved_as_json_before_the_npz_is_read_the_same() -> None:
    """Crawls saved the frontier's state as JSON, the model's arrays as lists; a resumed
    crawl reads that as it reads the .npz, and a torn archive is a clear error."""
    frontier = QLearningFrontier()
    assert teach(frontier, 40) is not None
    frontier.on_fetched(candidate(1, 0.3), 0.7, [candidate(2, 0.02)])
    state = frontier.get_state()
    assert state[:2] == b"PK"  # an .npz archive
    model = frontier.model.get_state()
    as_json = json.dumps(
        {
            "model": {
                "weights": [model["weight_columns"].tolist(), model["weights"].tolist()],
                "counts": [model["count_columns"].tolist(), model["counts"].tolist()],
                "calibration": model["calibration"].tolist(),
                "errors": model["errors"].tolist(),
                "updates": int(model["updates"][0]),
            },
            "subsidy": frontier.subsidy_,
            "hosts": frontier.host_values.get_state(),
            "sections": frontier.section_values.get_state(),
        }
    ).encode()
    for blob in (state, as_json):
        restored = QLearningFrontier()
        restored.set_state(blob)
        np.testing.assert_array_equal(restored.model.weights_, frontier.model.weights_)
        np.testing.assert_array_equal(restored.model.counts_, frontier.model.counts_)
        np.testing.assert_array_equal(restored.model.calibration_, frontier.model.calibration_)
        assert restored.model.updates_ == frontier.model.updates_
        assert restored.subsidy_ == frontier.subsidy_
        assert restored.host_values.get_state() == frontier.host_values.get_state()
        assert restored.section_values.get_state() == frontier.section_values.get_state()
    with pytest.raises(ValueError, match="unreadable"):
        QLearningFrontier().set_state(state[: len(state) // 2])  # a torn archive


class BestFirstWithHostValues(BestFirst):
    """Best-first's links, with hosts valued as the Q-learning frontier values them."""

    def __init__(self) -> None:
        super().__init__()
        self.host_values = SiteValues(weight=0.0)

    def host_bonus(self, host: str) -> float:
        return self.host_values.index(host)

    def pop(self, is_ready: Callable[[str], bool]) -> Candidate | None:
        found = super().pop(is_ready)
        if found is not None:
            self.host_values.tried(found.host)
            self.refresh_host(found.host)
        return found

    def on_fetched(self, candidate: Candidate, relevance: float, children: object) -> None:
        self.host_values.fetched(candidate.host, relevance)
        self.refresh_host(candidate.host)


def test_untrained_the_live_frontier_orders_links_exactly_as_best_first() -> None:
    # before the model has learned, the only departure is the values of the hosts, as
    # they are at each pop (here moved by their tries: no page is relevant, so the model
    # learns nothing, and the sections, which tell no page from another, weigh nothing)
    rng = np.random.default_rng(3)
    # (the budget affords the optimism from the first page: no page earns anything)
    learned = QLearningFrontier(budget=ExplorationBudget(warmup=0))
    greedy = BestFirstWithHostValues()
    for url_id in range(1, 201):
        host = f"h{rng.integers(4)}"
        score = round(float(rng.random()), 2)  # ties too
        section = ("", "api/", "dev/")[rng.integers(3)]
        depth = int(rng.integers(4))
        link = candidate(url_id, score, host=host, depth=depth, anchor="x y", section=section)
        learned.push(link)
        greedy.push(link)
    refits, linked = learned.model.refits_, 0
    for step in range(200):
        open_hosts = {f"h{i}" for i in range(4) if (step >> i) & 1 or step % 5 == 0}

        def ready(host: str, open_hosts: set[str] = open_hosts) -> bool:
            return host in open_hosts  # hosts closing and opening as politeness would

        for host in open_hosts:  # their turn has come, as the crawl tells the frontier
            learned.unpark(host)
            greedy.unpark(host)
        expected = greedy.pop(ready)
        assert popped_id(learned, ready) == (None if expected is None else expected.url_id)
        if expected is not None:
            linked += expected.depth > 0  # a seed's page does not judge the sections
            learned.on_fetched(expected, 0.0, [])
            greedy.on_fetched(expected, 0.0, [])
    assert learned.model.skill() == 0.0
    assert learned.model.refits_ > refits
    assert learned.section_skill.pages == linked > 100
    assert learned.section_weight_ == 0.0


def exploring() -> ExplorationBudget:
    """A budget that affords exploring from the first page, whatever the pages earn."""
    return ExplorationBudget(alpha=1.0, warmup=0)


def fetching(budget: ExplorationBudget) -> Callable[[float], bool]:
    """Take a URL of its own and count its page's reward: whether the budget turned."""
    url_ids = itertools.count()

    def fetch(reward: float) -> bool:
        url_id = next(url_ids)
        budget.taken(url_id)
        return budget.fetched(url_id, reward)

    return fetch


def test_the_budget_affords_exploring_again_as_soon_as_best_first_pages_make_up_for_it() -> None:
    """A page taken not exploring is the baseline's own: it adds its reward to both
    sums, and the shortfall of the tries is made up by alpha of it, however far the
    crawl's rewards fell. (Counted at the running mean of such pages, which lags a
    tenfold fall, each added more to the baseline than it earned.)"""
    budget = ExplorationBudget(alpha=0.3, warmup=10)
    fetch = fetching(budget)

    for _ in range(10):
        fetch(0.1)
    tries = 0
    while budget.exploring:  # tries that earn nothing
        fetch(0.0)
        tries += 1
    assert tries == 5  # 1.0 earned against 0.7 of a baseline of 1.5
    # best-first's pages now earn a tenth as much: 1.0 + 0.01 m >= 0.7 (1.5 + 0.01 m)
    pages = 0
    while not budget.exploring and pages < 1_000:
        fetch(0.01)
        pages += 1
    assert pages == 17


def test_a_host_whose_first_links_promise_nothing_is_still_tried() -> None:
    learned, greedy = QLearningFrontier(budget=exploring()), BestFirst()
    for frontier in (learned, greedy):
        for url_id in range(50):  # links that name the topic a little
            frontier.push(candidate(url_id, 0.05, host="loud"))
        frontier.push(candidate(99, 0.0, host="quiet", anchor="contents"))
    learned_order = [learned.pop(lambda host: True).host for _ in range(51)]
    greedy_order = [greedy.pop(lambda host: True).host for _ in range(51)]
    assert greedy_order.index("quiet") == 50  # best-first: after every loud link
    # optimism 0.1 / sqrt(1 + tried) of the host (its sections weigh nothing before they
    # are shown to tell pages apart): after four tries the loud host's is below the
    # untried one's by more than its links' lead (0.05 + 0.045 against 0.1)
    assert learned_order.index("quiet") == 4


def test_before_its_budget_affords_exploring_qlearning_orders_as_best_first() -> None:
    """Until `warmup` pages taken in best-first's order are fetched, the untried host
    waits behind every loud link, as in best-first; once they earned what best-first's
    order earns, the budget affords the optimism, and the untried host is tried."""
    learned, greedy = QLearningFrontier(budget=ExplorationBudget(warmup=10)), BestFirst()
    for frontier in (learned, greedy):
        for url_id in range(50):
            frontier.push(candidate(url_id, 0.05, host="loud"))
        frontier.push(candidate(99, 0.0, host="quiet", anchor="contents"))
    learned_order, greedy_order = [], []
    for _ in range(51):
        for frontier, order in ((learned, learned_order), (greedy, greedy_order)):
            found = frontier.pop(lambda host: True)
            frontier.on_fetched(found, found.score, [])
            order.append(found.url_id)
    assert learned_order[:10] == greedy_order[:10] == list(range(10))
    assert greedy_order.index(99) == 50
    # after the tenth fetch the optimism is on: 0.1 for the untried host, 0.1 / sqrt(11)
    # for the loud one, whose links lead by 0.05
    assert learned_order.index(99) == 10
    # a resumed crawl goes on with the budget it saved
    restored = QLearningFrontier(budget=ExplorationBudget(warmup=10))
    restored.set_state(learned.get_state())
    assert restored.budget.get_state() == learned.budget.get_state()
    assert restored.budget.exploring
    assert restored.host_values.optimism == 0.1


def test_the_budget_stops_exploring_when_its_tries_earn_less_and_starts_when_pages_earn() -> None:
    budget = ExplorationBudget(alpha=0.3, warmup=10)
    fetch = fetching(budget)

    assert not budget.exploring
    turns = [fetch(0.1) for _ in range(10)]  # best-first's pages earn 0.1 each
    assert turns == [False] * 9 + [True]
    assert budget.exploring
    # tries that earn nothing: earned 1.0 against 0.7 of the baseline's 1.0 + 0.1 k
    turns = [fetch(0.0) for _ in range(5)]
    assert turns == [False] * 4 + [True]
    assert not budget.exploring
    assert budget.baseline_rate == pytest.approx(0.1)  # tries do not count in its rate
    # best-first's pages again: 1.0 + 0.1 m against 0.7 (1.5 + 0.1 m), m >= 5 / 3
    turns = [fetch(0.1) for _ in range(2)]
    assert turns == [False, True]
    assert budget.exploring

    restored = ExplorationBudget(alpha=0.3, warmup=10)
    restored.set_state(budget.get_state())
    assert restored.get_state() == budget.get_state()
    assert restored.exploring
    fetch(0.1)
    url_id = 1_000_000  # none of fetch's
    budget.taken(url_id)
    budget.forget(url_id)  # a URL that will not be learned from counts in neither sum
    assert budget.fetched(url_id, 1.0) is False
    with pytest.raises(ValueError, match="exploration budget"):
        ExplorationBudget(alpha=1.5)
    with pytest.raises(ValueError, match="exploration budget"):
        restored.set_state([float("nan"), 0.0, 0.0, 0])


def fetch_pages_of_two_sections(frontier: QLearningFrontier, *, sections_tell: bool) -> None:
    """100 pages of host "t" fetched, half in each of two sections, their links scored 0
    to 0.2 at random: with `sections_tell`, one section's pages are relevant (0.5) and
    the other's are not, whatever their links' scores; otherwise a page's relevance is
    its link's score."""
    rng = np.random.default_rng(5)
    for url_id in range(1_000, 1_100):
        section = ("good/", "poor/")[url_id % 2]
        score = round(float(rng.random()) * 0.2, 3)
        reward = (0.5 if section == "good/" else 0.0) if sections_tell else score
        frontier.on_fetched(candidate(url_id, score, host="t", section=section), reward, [])


@pytest.mark.parametrize("sections_tell", [True, False])
def test_a_section_whose_first_links_promise_nothing_is_tried_once_sections_tell_pages_apart(
    sections_tell: bool,
) -> None:
    learned = QLearningFrontier(budget=exploring())
    fetch_pages_of_two_sections(learned, sections_tell=sections_tell)
    for url_id in range(50):  # API pages that name the topic barely
        learned.push(candidate(url_id, 0.01, section="api/"))
    learned.push(candidate(99, 0.0, anchor="development", section="dev/"))
    order = []
    for _ in range(51):
        found = learned.pop(lambda host: True)
        assert found is not None
        learned.on_fetched(found, 0.0, [])
        order.append(section_of(found.url))
    if sections_tell:
        # the sections predicted the pages better than their links (the skill is 0.53
        # after the 100 pages): their values weigh that much, and after a try the API
        # section's optimism and its links' lead are below the untried section's optimism
        assert learned.section_weight_ > 0.3
        assert order.index("a/dev") <= 2
        assert learned.section_values.tries("a/api") == 50
    else:  # a page's link told as much as its section: best-first's order
        assert learned.section_weight_ == 0.0
        assert order.index("a/dev") == 50


def test_a_restored_state_ranks_the_queued_sections_by_their_restored_values() -> None:
    taught = QLearningFrontier()
    for url_id in range(40):  # dev's pages were relevant, the API's not, their links alike
        section = ("api/", "dev/")[url_id % 2]
        reward = 0.5 if section == "dev/" else 0.0
        taught.on_fetched(candidate(100 + url_id, 0.1, section=section), reward, [])
    frontier = QLearningFrontier()
    frontier.push(candidate(1, 0.2, section="api/"))
    frontier.push(candidate(2, 0.1, section="dev/"))
    frontier.set_state(taught.get_state())  # a resumed crawl, its queue read back first
    assert frontier.section_weight_ == taught.section_skill.value() > 0.0
    assert frontier.pop(lambda host: True).url_id == 2


def test_among_equal_links_the_host_whose_pages_were_relevant_goes_first() -> None:
    frontier = QLearningFrontier()
    for url_id in range(40):  # pages of both hosts fetched, their links alike
        host = ("poor", "rich")[url_id % 2]
        frontier.on_fetched(candidate(url_id, 0.1, host=host), 0.4 if host == "rich" else 0.0, [])
    for url_id, host in ((100, "poor"), (101, "rich")):
        frontier.push(candidate(url_id, 0.1, host=host))
    # what the pages earned counts by their section, weighed by the sections' skill
    # (their means tell the pages apart, the links' scores do not); a host brings its
    # optimism alone
    assert frontier.section_weight_ > 0.0
    assert frontier.section_index("rich/") > frontier.section_index("poor/")
    assert frontier.host_bonus("rich") == frontier.host_bonus("poor")
    assert frontier.pop(lambda host: True).host == "rich"

    restored = QLearningFrontier()
    restored.set_state(frontier.get_state())
    for arm in ("rich/", "poor/"):
        assert restored.section_values.index(arm) == frontier.section_values.index(arm)
    assert restored.section_skill.get_state() == frontier.section_skill.get_state()
    assert restored.host_values.tries("rich") == frontier.host_values.tries("rich") == 1


def test_site_values_out_of_range_are_named() -> None:
    with pytest.raises(ValueError, match="prior > 0"):
        SiteValues(prior=0.0)
    with pytest.raises(ValueError, match=r"'a\.example'"):
        SiteValues().set_state({"a.example": [1, 1, float("nan")]})
    with pytest.raises(ValueError, match="shrink > 0"):
        SectionSkill(shrink=0.0)
    with pytest.raises(ValueError, match="out of range"):
        SectionSkill().set_state([1.0, 0.1, 0.01, 0.0, 0.0, -1.0, 0.5, 3])
    with pytest.raises(ValueError, match="unreadable"):
        SectionSkill().set_state([0.0] * 7)  # a torn state


def test_reranking_a_host_follows_the_model_and_keeps_re_visits_first() -> None:
    frontier = QLearningFrontier()
    frontier.push(candidate(1, 0.2, host="a", anchor="plain"))
    frontier.push(candidate(2, 0.4, host="b"))
    frontier.push(candidate(3, 0.1, host="a", anchor="lead"))
    due = Candidate(4, "http://a/source", "a", 0, 0.0, revisit=True)
    frontier.push(due)
    model = frontier.model
    model.updates_, model.warmup, model.errors_[:] = 1, 0.0, (1.0, 0.0)  # fully skilled
    model.counts_[:] = 1e9  # and sure of every feature
    [(lead, _)] = model.features([[("a=lead", 1.0)]])
    model.weights_[lead] = 1.0
    assert frontier.reprioritize_host("a") == 3
    assert frontier.pop(lambda host: host == "a") is due  # a re-visit stays first
    assert frontier.pop(lambda host: host == "a").url_id == 3  # the model's choice
    assert frontier.pop(lambda host: True).url_id == 2  # host b is not re-ranked
    assert frontier.pop(lambda host: True).url_id == 1
    assert frontier.pop(lambda host: True) is None


def test_a_links_features_are_held_while_it_is_queued_or_under_way_only() -> None:
    frontier = QLearningFrontier()
    for url_id in range(1, 7):
        frontier.push(candidate(url_id, 0.1 * url_id, host="a" if url_id <= 3 else "b"))
    assert frontier.described == 6
    taken = frontier.pop(lambda host: True)
    assert taken is not None
    assert frontier.described == 6
    frontier.on_fetched(taken, 0.5, [candidate(7, 0.05, host="a")])
    frontier.push(candidate(7, 0.05, host="a"))
    assert frontier.described == 6  # taken's let go of, its new link's held
    reached = frontier.pop(lambda host: True)
    assert reached is not None
    frontier.forget(reached)  # a redirect reached it first: it is not fetched
    assert frontier.described == 5
    dropped = frontier.drop_host("a")  # another crawler serves host a now
    assert len(dropped) == 4
    assert frontier.described == 1 == len(frontier)


def test_links_pushed_together_rank_and_are_held_as_pushed_one_by_one() -> None:
    trained = QLearningFrontier()
    assert teach(trained, 40) is not None
    together, one_by_one = QLearningFrontier(), QLearningFrontier()
    for frontier in (together, one_by_one):
        frontier.set_state(trained.get_state())
        assert frontier.model.skill() > 0  # the links' features move their ranks
    # as a refill reads them back: no context, their parents' relevance and depth
    read_back = [
        Candidate(
            url_id,
            f"http://{host}/{section}/{url_id}",
            host,
            1 + url_id % 3,
            0.01 * (url_id % 7),
            parent_relevance=0.1 * (url_id % 4),
        )
        for url_id in range(100, 160)
        for host, section in [("abc"[url_id % 3], "chapters" if url_id % 2 else "see")]
    ]
    read_back.append(Candidate(1, "http://a/source", "a", 0, 0.0, revisit=True))
    together.push_many(read_back)
    for link in read_back:
        one_by_one.push(link)
    assert together.described == one_by_one.described == len(read_back) - 1
    for link in read_back[:-1]:
        np.testing.assert_array_equal(
            together.links.get(link.url_id), one_by_one.links.get(link.url_id)
        )
    orders = [
        [taken.url_id for taken in iter(lambda f=f: f.pop(lambda host: True), None)]
        for f in (together, one_by_one)
    ]
    assert orders[0] == orders[1]
    assert orders[0][0] == 1  # the re-visit first
    assert len(orders[0]) == len(read_back)


def test_daemons_models_mix_their_weights_by_updates_and_add_their_counts() -> None:
    first, second = QLearningFrontier(), QLearningFrontier()
    teach(first, 40)
    teach(second, 5)
    a, b = first.model, second.model
    a.refit(), b.refit()
    weights = (a.updates_ * a.weights_ + b.updates_ * b.weights_) / (a.updates_ + b.updates_)
    counts, updates = a.counts_ + b.counts_, a.updates_ + b.updates_
    own = first.get_state()
    first.merge([second.get_state()])
    np.testing.assert_allclose(a.weights_, weights)
    np.testing.assert_allclose(a.counts_, counts)
    assert a.updates_ == updates
    assert first.get_state() != own  # its weights are the mixed ones now
    restored = QLearningFrontier()
    restored.set_state(first.get_state())
    assert restored.model.updates_ == a.updates_ - b.updates_  # its own links only
    first.merge([second.get_state()])  # merged again: counts are not added twice
    np.testing.assert_allclose(a.counts_, counts)
    with pytest.raises(ValueError, match="unreadable"):
        first.merge([b'{"model": {}, "subsidy": 0.1}'])


def test_the_heaps_of_hosts_and_sections_keep_no_more_than_a_few_stale_entries() -> None:
    # every pop and every fetch moves a host's and a section's value and pushes their
    # heads again
    frontier = QLearningFrontier()
    for url_id in range(3_000):
        section = f"s{url_id % 5}/"
        frontier.push(candidate(url_id, (url_id % 7) / 10, host=f"h{url_id % 3}", section=section))
    most = most_sections = 0
    while (popped := frontier.pop(lambda host: True)) is not None:
        frontier.on_fetched(popped, 0.0, [])
        most = max(most, len(frontier._heads))
        heads = [len(queues.heads or ()) for queues in frontier._queues.values()]
        most_sections = max([most_sections, *heads])
    assert most <= 2 * 3 + HEADS_SLACK
    assert most_sections <= 2 * 5 + HEADS_SLACK


class CountingReranks(QLearningFrontier):
    def __init__(self, **settings: Any) -> None:
        super().__init__(QLearningSettings(**settings))
        self.reranked: list[str] = []
        self.slices: list[int] = []
        self.done: list[bool] = []

    def reprioritize_slice(self, host: str, limit: int) -> tuple[int, bool]:
        ranked, done = super().reprioritize_slice(host, limit)
        self.reranked.append(host)
        self.slices.append(ranked)
        self.done.append(done)
        return ranked, done


def test_links_are_ranked_again_only_while_the_model_corrects_them() -> None:
    frontier = CountingReranks()
    for url_id in range(400):
        frontier.push(candidate(url_id, 0.1, host=f"h{url_id % 4}", section=f"s{url_id % 3}/"))
    for _ in range(3 * frontier.model.batch):  # nothing relevant: nothing to correct
        frontier.on_fetched(frontier.pop(lambda host: True), 0.0, [])
    assert frontier.model.refits_ >= 3
    assert frontier.reranked == []  # the sections' values moved their links unranked
    model = frontier.model
    model.updates_, model.warmup, model.errors_[:] = 1, 0.0, (1.0, 0.0)  # fully skilled
    for _ in range(model.batch):
        frontier.on_fetched(frontier.pop(lambda host: True), 0.0, [])
    assert sorted(frontier.reranked) == ["h0", "h1", "h2", "h3"]  # all within the budget
    model.errors_[:] = (1.0, 2.0)  # unskilled again: its corrections are taken back
    for _ in range(2 * model.batch):
        frontier.on_fetched(frontier.pop(lambda host: True), 0.0, [])
    assert sorted(frontier.reranked) == ["h0", "h0", "h1", "h1", "h2", "h2", "h3", "h3"]


def test_a_host_larger_than_the_budget_is_re_ranked_a_slice_a_batch() -> None:
    """One host of 640 URLs, a budget of 100: each batch learned re-ranks at most 100
    of them, a round ranks each URL once, and the link the model now prefers, queued
    last by its score, is taken once its slice comes."""
    frontier = CountingReranks(rerank_budget=100)
    frontier.push(candidate(0, 0.05, anchor="lead"))
    for url_id in range(1, 640):
        frontier.push(candidate(url_id, 0.1, anchor="plain"))
    model = frontier.model
    model.updates_, model.warmup, model.errors_[:] = 1, 0.0, (1.0, 0.0)  # fully skilled
    model.counts_[:] = 1e9
    [(lead, _)] = model.features([[("a=lead", 1.0)]])
    model.weights_[lead] = 1.0
    taken = []
    for _ in range(8 * model.batch):
        popped = frontier.pop(lambda host: True)
        taken.append(popped.url_id)
        frontier.on_fetched(popped, 0.0, [])
    assert set(frontier.reranked) == {"a"}
    assert frontier.slices[0] == 100
    assert max(frontier.slices) <= 100
    first_round = frontier.slices[: frontier.done.index(True) + 1]
    fetched = model.batch * len(first_round)  # at most, by the round's end
    assert 640 - fetched <= sum(first_round) <= 640
    assert 0 in taken[model.batch :]  # not before its slice, and not left behind


def rich_is_busy(host: str) -> bool:
    return host != "rich"


def patient_frontier(rich_reward: float, poor_reward: float) -> QLearningFrontier:
    """A rich host and a poor one, each with a page fetched that earned these rewards;
    then a rich URL ranked far above five poor ones."""
    return tried_hosts_frontier({"rich": rich_reward, "poor": poor_reward}, exploring(), 1)


def tried_hosts_frontier(
    rewards: dict[str, float], budget: ExplorationBudget, tries: int = 3
) -> QLearningFrontier:
    """Hosts each tried `tries` times (`patient_after` is 3), their pages earning these
    rewards; then a URL of the first host ranked far above five of the second's."""
    frontier = QLearningFrontier(QLearningSettings(patient_after=3), budget=budget)
    url_id = 100
    for host, reward in rewards.items():
        for _ in range(tries):
            fetched = candidate(url_id, 0.1, host=host)
            frontier.push(fetched)
            assert popped_id(frontier, lambda h, host=host: h == host) == url_id
            frontier.on_fetched(fetched, reward, [])
            url_id += 1
    awaited, ready = list(rewards)[:2]
    frontier.push(candidate(0, 0.8, host=awaited))
    for url_id in range(1, 6):
        frontier.push(candidate(url_id, 0.1, host=ready))
    return frontier


def test_a_patient_frontier_keeps_a_host_waiting_only_once_it_was_tried() -> None:
    """The rich host, whose page earned more than the crawl's pages do, is busy with a
    URL ranked far above the poor host's: the poor host's first `patient_after` URLs
    (its first fetch counted) are fetched all the same, then it waits."""
    frontier = patient_frontier(rich_reward=0.5, poor_reward=0.0)
    assert frontier.patience == 0.5
    popped = [frontier.pop(rich_is_busy, turn_comes=lambda host: True) for _ in range(3)]
    assert [c.url_id for c in popped[:2] if c is not None] == [1, 2]
    assert popped[2] is None
    assert frontier.waiting_for == "rich"
    frontier.unpark("rich")  # its turn has come
    assert frontier.pop(lambda host: True).host == "rich"


def test_no_host_waits_for_one_whose_pages_earned_less_than_the_crawls() -> None:
    """The rich host's URL ranks far above, but its page earned nothing while the
    poor host's earned: its links' promise alone keeps no slot idle."""
    frontier = patient_frontier(rich_reward=0.0, poor_reward=0.5)
    popped = [frontier.pop(rich_is_busy, turn_comes=lambda host: True) for _ in range(5)]
    assert [c.url_id for c in popped if c is not None] == [1, 2, 3, 4, 5]
    assert frontier.waiting_for is None


def spent() -> ExplorationBudget:
    """A budget past its warmup that does not afford exploring: what the crawl earned is
    far below what best-first's order would have."""
    budget = ExplorationBudget(warmup=0)
    budget.set_state([0.0, 1_000.0, 0.1, 0])
    assert not budget.exploring
    assert not budget.warming_up
    return budget


@pytest.mark.parametrize("budget", [spent, exploring], ids=["best-first", "exploring"])
def test_a_host_waits_for_one_whose_pages_earned_more_whatever_the_budget(
    budget: Callable[[], ExplorationBudget],
) -> None:
    """In best-first's order, after the warmup, as while exploring, a tried host whose
    pages earned nothing waits for the busy host whose pages earned."""
    frontier = tried_hosts_frontier({"rich": 0.5, "poor": 0.0}, budget())
    assert frontier.budget.exploring == (budget is exploring)
    assert frontier.pop(rich_is_busy, turn_comes=lambda host: True) is None
    assert frontier.waiting_for == "rich"


def test_no_host_waits_during_the_warmup() -> None:
    """The warmup's pages are best-first's: every slot is filled."""
    frontier = tried_hosts_frontier({"rich": 0.5, "poor": 0.0}, ExplorationBudget())
    assert frontier.budget.warming_up
    popped = [frontier.pop(rich_is_busy, turn_comes=lambda host: True) for _ in range(5)]
    assert [c.url_id for c in popped if c is not None] == [1, 2, 3, 4, 5]
    assert frontier.waiting_for is None


def test_in_best_first_s_order_no_host_waits_for_one_whose_pages_earned_less() -> None:
    """The busy host's pages earned more than the crawl's (a third host's earned
    nothing) but less than the ready host's: while exploring the ready host waits, in
    best-first's order it is fetched."""
    rewards = {"rich": 0.3, "richer": 0.5, "bare": 0.0}
    waits = tried_hosts_frontier(rewards, exploring())
    assert waits.pop(rich_is_busy, turn_comes=lambda host: True) is None
    fetches = tried_hosts_frontier(rewards, spent())
    assert not fetches.budget.exploring
    popped = [fetches.pop(rich_is_busy, turn_comes=lambda host: True) for _ in range(5)]
    assert [c.url_id for c in popped if c is not None] == [1, 2, 3, 4, 5]
    assert fetches.waiting_for is None


def test_a_frontier_of_its_own_draws_the_sections_its_own_way() -> None:
    """A subclass's `section_of` names the arms its URLs are tried and learned in (as
    a variant of the frontier would draw them)."""

    class ByDirectory(QLearningFrontier):
        section_of = staticmethod(lambda url: url.rsplit("/", 1)[0])

    frontier = ByDirectory()
    frontier.push(candidate(1, 0.1, section="ref/api/"))
    found = frontier.pop(lambda host: True)
    assert found is not None
    frontier.on_fetched(found, 0.5, [])
    assert frontier.section_values.tries("http://a/ref/api") == 1
    assert frontier.section_values.mean("http://a/ref/api") > 0.0
    assert frontier.section_values.tries("a/ref") == 0


def test_a_url_s_section_is_its_host_and_first_path_segment() -> None:
    assert section_of("http://h:8800/dev/gitwash/index.html") == "h:8800/dev"
    assert section_of("http://h:8800/dev/") == "h:8800/dev"
    assert section_of("http://h:8800/index.html") == "h:8800/"
    assert section_of("http://h:8800/") == "h:8800/"
    assert section_of("http://h:8800") == "h:8800/"
    assert section_of("http://h:8800/search?q=a/b") == "h:8800/"


def reveal_and_take(
    frontier: PriorityFrontier,
    page: Candidate,
    relevance: float,
    links: list[Candidate],
    expected: int,
) -> Candidate:
    """`page`'s fetch earns `relevance` and reveals `links`, queued; the next URL taken,
    which must be `expected`."""
    frontier.on_fetched(page, relevance, links)
    for link in links:
        frontier.push(link)
    taken = frontier.pop(lambda host: True)
    assert taken is not None
    assert taken.url_id == expected
    return taken


def crawl_a_hub(frontier: PriorityFrontier, relevance: float) -> list[int]:
    """A hub (a seed) reveals three links; its best one's page earns `relevance`; then
    two links are found that look better than the hub's other two: the order the rest
    come out in."""
    hub = candidate(1, 0.0, depth=0)
    frontier.push(hub)
    assert popped_id(frontier) == 1
    links = [candidate(2, 0.05), candidate(3, 0.02), candidate(4, 0.01)]
    best = reveal_and_take(frontier, hub, 0.0, links, expected=2)
    frontier.on_fetched(best, relevance, [])
    frontier.push(candidate(5, 0.04))
    frontier.push(candidate(6, 0.03))
    order = []
    while (taken := frontier.pop(lambda host: True)) is not None:
        order.append(taken.url_id)
        frontier.on_fetched(taken, 0.0, [])
    return order


def test_a_relevant_page_raises_the_links_found_beside_it() -> None:
    # the hub's other links rise to gamma times the share of a link's estimate the page's
    # relevance gives: 0.5 * 0.3 * 0.3 = 0.045, above the links found after (0.04, 0.03)
    assert crawl_a_hub(BestFirst(), 0.3) == [5, 6, 3, 4]
    raising = QLearningFrontier(
        QLearningSettings(relative_levels=1), budget=ExplorationBudget(warmup=0)
    )
    assert crawl_a_hub(raising, 0.3) == [3, 4, 5, 6]
    # the crawl's threshold tells what is relevant; the default raises, at 0 nothing is
    higher = QLearningFrontier(
        QLearningSettings(relative_levels=1, relevant_at=0.35), budget=ExplorationBudget(warmup=0)
    )
    assert crawl_a_hub(higher, 0.3) == [5, 6, 3, 4]
    default = QLearningFrontier(budget=ExplorationBudget(warmup=0))
    assert crawl_a_hub(default, 0.3) == [3, 4, 5, 6]
    unraised = QLearningFrontier(
        QLearningSettings(relative_levels=0), budget=ExplorationBudget(warmup=0)
    )
    assert crawl_a_hub(unraised, 0.3) == [5, 6, 3, 4]
    assert len(unraised.relatives.families) == 0


def test_the_warmups_relevant_pages_raise_their_relatives_once_it_ends() -> None:
    # the hub's page, the relevant one and the next (5) are the warmup's: best-first's
    # order; once it ends the held-back raise puts the hub's other links before 6
    frontier = QLearningFrontier(
        QLearningSettings(relative_levels=1), budget=ExplorationBudget(warmup=3)
    )
    assert crawl_a_hub(frontier, 0.3) == [5, 3, 4, 6]


def test_a_relevant_page_raises_the_links_its_discoverer_was_found_with() -> None:
    frontier = QLearningFrontier(
        QLearningSettings(relative_levels=2), budget=ExplorationBudget(warmup=0)
    )
    hub = candidate(1, 0.0, depth=0)
    frontier.push(hub)
    assert popped_id(frontier) == 1
    sections = [candidate(2, 0.05), candidate(3, 0.01)]
    first = reveal_and_take(frontier, hub, 0.0, sections, expected=2)
    pages = [candidate(4, 0.06), candidate(5, 0.01)]
    relevant = reveal_and_take(frontier, first, 0.0, pages, expected=4)
    frontier.on_fetched(relevant, 0.8, [])
    frontier.push(candidate(6, 0.05))
    # its sibling rises to 0.5 * 0.3 * 0.8 = 0.12, the hub's other section to 0.06
    order = [popped_id(frontier) for _ in range(3)]
    assert order == [5, 3, 6]
    assert len(frontier.relatives.families) == 4


def raise_a_family(lowered_after: int | None, kept_by_relevance: bool = True) -> QLearningFrontier:
    """A hub reveals 2 and five links that look worse (3 to 7, at 0.01) than one found
    elsewhere (20, at 0.04); 2's page is relevant and raises them to 0.045."""
    frontier = QLearningFrontier(
        QLearningSettings(
            relative_levels=1,
            relatives_lowered_after=lowered_after,
            relatives_kept_by_relevance=kept_by_relevance,
        ),
        budget=ExplorationBudget(warmup=0),
    )
    hub = candidate(1, 0.0, depth=0)
    frontier.push(hub)
    assert popped_id(frontier) == 1
    links = [candidate(2, 0.05), *(candidate(i, 0.01) for i in range(3, 8))]
    best = reveal_and_take(frontier, hub, 0.0, links, expected=2)
    frontier.push(candidate(20, 0.04))
    reveal_and_take(frontier, best, 0.3, [], expected=3)
    return frontier


def test_a_raised_family_goes_back_to_its_own_estimates_once_its_pages_miss() -> None:
    # 3 and 4 earn nothing and reveal nothing: the rest of the family falls back below 20
    frontier = raise_a_family(lowered_after=2)
    frontier.on_fetched(candidate(3, 0.045), 0.0, [])
    assert popped_id(frontier) == 4
    frontier.on_fetched(candidate(4, 0.045), 0.0, [])
    assert [popped_id(frontier) for _ in range(2)] == [20, 5]
    # never lowered with None
    frontier = raise_a_family(lowered_after=None)
    frontier.on_fetched(candidate(3, 0.045), 0.0, [])
    assert popped_id(frontier) == 4
    frontier.on_fetched(candidate(4, 0.045), 0.0, [])
    assert popped_id(frontier) == 5


def test_a_raised_page_that_leads_on_keeps_its_family_raised() -> None:
    # 3 reveals a new link: the misses start again, and 4's alone does not lower the rest
    frontier = raise_a_family(lowered_after=2)
    reveal_and_take(frontier, candidate(3, 0.045), 0.0, [candidate(30, 0.001)], expected=4)
    frontier.on_fetched(candidate(4, 0.045), 0.0, [])
    assert popped_id(frontier) == 5


def test_a_relevant_raised_page_keeps_its_family_raised_unless_only_leading_on_does() -> None:
    # 3 is relevant and reveals nothing, 4 misses: by default 3 starts the misses again
    frontier = raise_a_family(lowered_after=2)
    frontier.on_fetched(candidate(3, 0.045), 0.3, [])
    assert popped_id(frontier) == 4
    frontier.on_fetched(candidate(4, 0.045), 0.0, [])
    assert [popped_id(frontier) for _ in range(2)] == [5, 6]
    # kept by leading on alone, 3 and 4 are two misses in a row: lowered
    frontier = raise_a_family(lowered_after=2, kept_by_relevance=False)
    frontier.on_fetched(candidate(3, 0.045), 0.3, [])
    assert popped_id(frontier) == 4
    frontier.on_fetched(candidate(4, 0.045), 0.0, [])
    assert popped_id(frontier) == 20
    # a relevant page of the lowered family raises the rest again until their next miss
    frontier.on_fetched(candidate(20, 0.04), 0.0, [])
    assert popped_id(frontier) == 5
    frontier.on_fetched(candidate(5, 0.01), 0.3, [])
    frontier.push(candidate(21, 0.04))
    assert popped_id(frontier) == 6
    frontier.on_fetched(candidate(6, 0.045), 0.0, [])
    assert [popped_id(frontier) for _ in range(2)] == [21, 7]


def test_only_the_raises_of_families_still_held_are_kept_for_lowering() -> None:
    # families of two links, four links held: fifty raised families leave at most
    # twice as many raises as links held, the newest family's among them
    frontier = QLearningFrontier(
        QLearningSettings(relative_levels=1, relatives_lowered_after=5),
        budget=ExplorationBudget(warmup=0),
        families=LinkFamilies(capacity=4),
    )
    for page in range(1000, 1050):
        links = [candidate(2 * page, 0.01), candidate(2 * page + 1, 0.01)]
        frontier.on_fetched(candidate(page, 0.0), 0.0, links)
        frontier.push_many(links)
        frontier.on_fetched(links[0], 0.3, [])
    assert len(frontier.relatives.raised_) <= 8
    assert 2 * 1049 + 1 in frontier.relatives.raised_
    assert len(frontier.relatives.misses_) <= 4


def test_the_raises_settings_out_of_range_are_named() -> None:
    with pytest.raises(ValueError, match="relative_levels is 0 or more, not -1"):
        QLearningSettings(relative_levels=-1)
    with pytest.raises(ValueError, match="relatives_lowered_after is 1 or more, or None, not 0"):
        QLearningSettings(relatives_lowered_after=0)
    with pytest.raises(ValueError, match="relevant_at is between 0 and 1, not 2"):
        QLearningSettings(relevant_at=2)
