from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from policies import (
    BestFirst,
    BreadthFirst,
    Candidate,
    PriorityFrontier,
    frontier_policy_names,
    make_frontier_policy,
    register_frontier_policy,
)


def candidate(url_id: int, host: str = "a", depth: int = 0, score: float = 0.0) -> Candidate:
    return Candidate(url_id, f"http://{host}/{url_id}", host, depth, score)


def always(_host: str) -> bool:
    return True


def drain(frontier: PriorityFrontier) -> list[int]:
    popped = []
    while (item := frontier.pop(always)) is not None:
        popped.append(item.url_id)
    return popped


def test_breadth_first_takes_shallow_urls_first_then_discovery_order() -> None:
    frontier = BreadthFirst()
    for url_id, depth in [(1, 2), (2, 0), (3, 1), (4, 0), (5, 1)]:
        frontier.push(candidate(url_id, host=f"h{url_id % 2}", depth=depth))
    assert drain(frontier) == [2, 4, 3, 5, 1]


def test_best_first_takes_highest_score_first_across_hosts() -> None:
    frontier = BestFirst()
    for url_id, score in [(1, 0.2), (2, 0.9), (3, 0.5), (4, 0.7)]:
        frontier.push(candidate(url_id, host=f"h{url_id}", score=score))
    assert drain(frontier) == [2, 4, 3, 1]


def test_best_first_without_a_relevance_signal_is_breadth_first() -> None:
    """A page's 5,000 worthless links arrive before its 50 siblings (put back, refilled,
    or found later): the siblings, one level up, still go first."""
    frontier = BestFirst()
    for url_id in range(5_000):
        frontier.push(candidate(url_id, host=f"h{url_id % 3}", depth=2))
    for url_id in range(5_000, 5_050):
        frontier.push(candidate(url_id, host=f"h{url_id % 3}", depth=1))
    assert drain(frontier)[:50] == list(range(5_000, 5_050))


@pytest.mark.parametrize("name", frontier_policy_names())
def test_every_policy_gives_ties_to_the_shallower_url(name: str) -> None:
    frontier = make_frontier_policy(name)
    deep, shallow = candidate(1, depth=3, score=0.5), candidate(2, depth=1, score=0.5)
    frontier.push(deep)
    frontier.push(shallow)
    assert drain(frontier) == [2, 1]


def test_pop_parks_hosts_that_are_not_ready_until_their_turn_comes() -> None:
    frontier = BestFirst()
    frontier.push(candidate(1, host="busy", score=0.9))
    frontier.push(candidate(2, host="free", score=0.1))
    asked: list[str] = []

    def ready(host: str) -> bool:
        asked.append(host)
        return host != "busy"

    found = frontier.pop(ready)
    assert found is not None
    assert found.url_id == 2
    assert frontier.is_parked("busy")
    assert frontier.drain_parked() == ["busy"]
    assert frontier.drain_parked() == []
    # parked, it is not looked at again, however often the crawl pops
    asked.clear()
    assert frontier.pop(ready) is None
    assert frontier.pop(always) is None
    assert asked == []
    assert len(frontier) == 1
    # a better URL of a parked host keeps it parked, ranked by it
    frontier.push(candidate(3, host="busy", score=0.95))
    assert frontier.pop(always) is None
    frontier.unpark("busy")  # its turn has come: it competes again, best URL first
    assert not frontier.is_parked("busy")
    assert [frontier.pop(always).url_id for _ in range(2)] == [3, 1]  # type: ignore[union-attr]
    assert len(frontier) == 0


def test_a_better_candidate_for_a_host_becomes_its_head() -> None:
    frontier = BestFirst()
    frontier.push(candidate(1, host="a", score=0.1))
    frontier.push(candidate(2, host="b", score=0.5))
    frontier.push(candidate(3, host="a", score=0.9))
    assert drain(frontier) == [3, 2, 1]


def test_hosts_lists_only_hosts_with_queued_urls() -> None:
    frontier = BreadthFirst()
    frontier.push(candidate(1, host="a"))
    frontier.push(candidate(2, host="b"))
    frontier.pop(lambda host: host == "a")
    assert set(frontier.hosts()) == {"b"}


class GroupedBestFirst(BestFirst):
    """Best-first with each URL's group, the first segment of its path, worth a bonus
    set by hand; it counts the own priorities it computes."""

    def __init__(self) -> None:
        super().__init__()
        self.bonus: dict[str, float] = {}
        self.ranked = 0

    def own_priority(self, candidate: Candidate) -> float:
        self.ranked += 1
        return candidate.score

    def group_of(self, candidate: Candidate) -> str:
        return candidate.url.split("/")[3]

    def group_bonus(self, group: str) -> float:
        return self.bonus.get(group, 0.0)


def test_a_groups_bonus_moves_its_urls_at_once_without_ranking_them_again() -> None:
    frontier = GroupedBestFirst()
    for url_id, host, group, score in (
        (1, "a", "api", 0.5),
        (2, "a", "api", 0.45),
        (3, "a", "dev", 0.4),
        (4, "a", "dev", 0.1),
        (5, "b", "x", 0.42),
    ):
        frontier.push(Candidate(url_id, f"http://{host}/{group}/{url_id}", host, 0, score))
    assert frontier.pop(always).url_id == 1
    frontier.bonus["dev"], frontier.bonus["api"] = 0.1, -0.2
    frontier.refresh_group("a", "dev")
    frontier.refresh_group("a", "api")
    # dev's 0.4 + 0.1, b's 0.42, api's 0.45 - 0.2, dev's 0.1 + 0.1
    assert drain(frontier) == [3, 5, 2, 4]
    assert frontier.ranked == 5  # each URL ranked once, when pushed


@given(
    st.lists(
        st.one_of(
            st.tuples(
                st.just("push"), st.sampled_from("ab"), st.sampled_from("xyz"), st.floats(0, 1)
            ),
            st.tuples(st.just("pop"), st.just(""), st.just(""), st.just(0.0)),
            st.tuples(st.just("bonus"), st.just(""), st.sampled_from("xyz"), st.floats(-1, 1)),
        ),
        max_size=80,
    )
)
def test_a_hosts_groups_come_and_go_and_each_pop_is_the_best(
    steps: list[tuple[str, str, str, float]],
) -> None:
    """Groups of a host appear, empty and come back (a host of one group keeps it in
    slots of its own, of more in a dict), their bonuses move: each pop is the best."""
    frontier = GroupedBestFirst()
    own: dict[int, float] = {}
    queued: dict[int, Candidate] = {}
    for number, (step, host, group, value) in enumerate(steps):
        if step == "push":
            item = Candidate(number, f"http://{host}/{group}/{number}", host, 0, value)
            frontier.push(item)
            own[number], queued[number] = value, item
        elif step == "pop":
            pop_the_best(frontier, always, own, queued)
        else:  # a group's bonus is every host's with that group
            frontier.bonus[group] = value
            for each in "ab":
                frontier.refresh_group(each, group)
    while queued:
        assert pop_the_best(frontier, always, own, queued) is not None
    assert frontier.pop(always) is None


def pop_the_best(
    frontier: PriorityFrontier,
    ready: Callable[[str], bool],
    own: dict[int, float],
    queued: dict[int, Candidate],
) -> Candidate | None:
    """Pop, and check that the candidate popped is the best of the ready ones by its
    own priority, its group's bonus and its host's, judged as the pop happens (a bonus
    moves as a host or a group is tried)."""
    value = {
        url_id: own[url_id]
        + frontier.group_bonus(frontier.group_of(item))
        + frontier.host_bonus(item.host)
        for url_id, item in queued.items()
    }
    best = max((value[i] for i, item in queued.items() if ready(item.host)), default=None)
    item = frontier.pop(ready)
    if best is None:
        assert item is None
        return None
    assert item is not None
    assert value[item.url_id] == best
    del queued[item.url_id]
    return item


@given(
    st.lists(
        st.tuples(st.sampled_from("abcde"), st.floats(0, 1), st.integers(0, 5)),
        max_size=60,
    ),
    st.sets(st.sampled_from("abcde")),
)
def test_every_policy_pops_each_candidate_once_in_priority_order(
    items: list[tuple[str, float, int]], blocked: set[str]
) -> None:
    def open_host(host: str) -> bool:
        return host not in blocked

    for name in frontier_policy_names():
        frontier = make_frontier_policy(name)
        pushed = [candidate(i, host, depth, score) for i, (host, score, depth) in enumerate(items)]
        for item in pushed:
            frontier.push(item)
        own = {item.url_id: frontier.own_priority(item) for item in pushed}
        queued = {item.url_id: item for item in pushed}
        ready_first = []
        while (item := pop_the_best(frontier, open_host, own, queued)) is not None:
            ready_first.append(item)
        assert all(item.host not in blocked for item in ready_first)
        for host in frontier.drain_parked():  # their turn comes
            frontier.unpark(host)
        rest = []
        while (item := pop_the_best(frontier, always, own, queued)) is not None:
            rest.append(item)
        popped = ready_first + rest
        assert sorted(c.url_id for c in popped) == list(range(len(items)))
        assert len(frontier) == 0


def test_unknown_policy_names_the_known_ones() -> None:
    with pytest.raises(
        ValueError, match=r"unknown frontier policy 'nope' \(known: best-first, bfs"
    ):
        make_frontier_policy("nope")


def test_a_name_cannot_be_registered_twice() -> None:
    with pytest.raises(ValueError, match="already registered"):
        register_frontier_policy("bfs", BreadthFirst)


def waiting_frontier(patience: float, *, rich_score: float = 0.8, poor_score: float = 0.2):
    frontier = BestFirst(patience=patience)
    frontier.push(candidate(1, host="rich", score=rich_score))
    frontier.push(candidate(2, host="poor", score=poor_score))
    return frontier


def rich_is_busy(host: str) -> bool:
    return host != "rich"


def test_with_patience_the_frontier_waits_for_a_busy_host_whose_url_ranks_far_above() -> None:
    frontier = waiting_frontier(0.5)
    assert frontier.pop(rich_is_busy, turn_comes=lambda host: True) is None
    assert frontier.waiting_for == "rich"
    assert len(frontier) == 2  # nothing lost: the rich host's turn takes its URL
    frontier.unpark("rich")  # its turn has come
    assert frontier.pop(always).url_id == 1
    assert frontier.pop(always, turn_comes=lambda host: True).url_id == 2
    assert frontier.waiting_for is None


@pytest.mark.parametrize(
    ("patience", "poor_score", "turn_comes"),
    [
        (0.0, 0.2, True),  # no patience: every slot is filled
        (0.5, 0.4, True),  # half the rich URL's rank: worth fetching now
        (0.5, 0.2, False),  # the rich host backs off or is another daemon's: no wait
    ],
)
def test_the_frontier_fetches_the_ready_url_when_waiting_is_not_worth_it(
    patience: float, poor_score: float, turn_comes: bool
) -> None:
    frontier = waiting_frontier(patience, poor_score=poor_score)
    assert frontier.pop(rich_is_busy, turn_comes=lambda host: turn_comes).url_id == 2
    assert frontier.waiting_for is None


def test_a_revisit_due_now_is_not_waited_for() -> None:
    frontier = BestFirst(patience=1.0)
    frontier.push(Candidate(1, "http://rich/1", "rich", 0, 0.0, revisit=True))
    frontier.push(candidate(2, host="poor", score=0.2))
    assert frontier.pop(rich_is_busy, turn_comes=lambda host: True).url_id == 2


def test_patience_is_the_policys_own_unless_given() -> None:
    assert make_frontier_policy("best-first").patience == 0.0
    assert make_frontier_policy("bfs").patience == 0.0
    assert make_frontier_policy("qlearning").patience == 0.5
    assert make_frontier_policy("qlearning", patience=0.0).patience == 0.0
    with pytest.raises(ValueError, match="patience is between 0 and 1"):
        BestFirst(patience=1.5)


def test_a_raised_url_ranks_by_its_new_score_and_is_popped_once() -> None:
    frontier = BestFirst()
    for url_id, score in ((1, 0.5), (2, 0.4), (3, 0.1), (4, 0.05)):
        frontier.push(candidate(url_id, score=score))
    assert frontier.raise_score(4, 0.45)
    assert not frontier.raise_score(1, 0.3)  # never lowered
    assert not frontier.raise_score(9, 0.9)  # not queued here
    assert len(frontier) == 4
    popped = []
    while (item := frontier.pop(always)) is not None:
        popped.append((item.url_id, item.score))
    assert popped == [(1, 0.5), (4, 0.45), (2, 0.4), (3, 0.1)]
    assert not frontier.raise_score(4, 0.9)  # popped: no longer queued


def test_a_raised_url_that_headed_its_group_leaves_no_dead_head() -> None:
    frontier = GroupedBestFirst()
    frontier.push(Candidate(1, "http://a/x/1", "a", 0, 0.3))
    frontier.push(Candidate(2, "http://a/y/2", "a", 0, 0.2))
    frontier.bonus["x"] = -0.5  # group x's only URL ranks below y's
    frontier.refresh_group("a", "x")
    assert frontier.raise_score(1, 0.9)
    assert [(item.url_id, item.score) for item in iter(lambda: frontier.pop(always), None)] == [
        (1, 0.9),
        (2, 0.2),
    ]
    assert len(frontier) == 0


# steps of a frontier's life: (step, host, group, value)
PUSH = st.tuples(st.just("push"), st.sampled_from("ab"), st.sampled_from("xyz"), st.floats(0, 1))
RAISE = st.tuples(st.just("raise"), st.just(""), st.just(""), st.floats(0, 1))
POP = st.tuples(st.just("pop"), st.just(""), st.just(""), st.just(0.0))
DROP = st.tuples(st.just("drop"), st.sampled_from("ab"), st.just(""), st.just(0.0))
RERANK = st.tuples(st.just("rerank"), st.sampled_from("ab"), st.just(""), st.just(0.0))


def frontier_lives(*steps: st.SearchStrategy, min_size: int = 0) -> st.SearchStrategy:
    """Lists of pushes, raises, pops, hosts dropped and re-ranked, and these `steps`."""
    return st.lists(
        st.one_of(PUSH, RAISE, POP, DROP, RERANK, *steps), min_size=min_size, max_size=80
    )


@given(
    frontier_lives(
        st.tuples(st.just("bonus"), st.just(""), st.sampled_from("xyz"), st.floats(-1, 1))
    ),
    st.randoms(use_true_random=False),
)
def test_raised_urls_keep_every_pop_the_best_and_each_url_once(
    steps: list[tuple[str, str, str, float]], rng
) -> None:
    """Raises among pushes, pops, bonuses, hosts dropped and queues re-ranked: each pop
    is the best by the scores as raised, each URL leaves once, and the size is right."""
    frontier = GroupedBestFirst()
    own: dict[int, float] = {}
    queued: dict[int, Candidate] = {}
    left: list[int] = []
    for number, (step, host, group, value) in enumerate(steps):
        if step == "push":
            item = Candidate(number, f"http://{host}/{group}/{number}", host, 0, value)
            frontier.push(item)
            own[number], queued[number] = value, item
        elif step == "raise" and queued:
            url_id = rng.choice(sorted(queued))
            raised = frontier.raise_score(url_id, value)
            assert raised == (value > own[url_id])
            own[url_id] = max(own[url_id], value)
        elif step == "pop":
            item = pop_the_best(frontier, always, own, queued)
            if item is not None:
                assert item.score == own[item.url_id]
                left.append(item.url_id)
        elif step == "bonus":
            frontier.bonus[group] = value
            for each in "ab":
                frontier.refresh_group(each, group)
        elif step == "drop":
            for item in frontier.drop_host(host):
                assert item.score == own[item.url_id]
                left.append(item.url_id)
                del queued[item.url_id]
        elif step == "rerank":
            frontier.reprioritize_host(host)
        assert len(frontier) == len(queued)
    while queued:
        left.append(pop_the_best(frontier, always, own, queued).url_id)
    assert frontier.pop(always) is None
    assert sorted(left) == sorted(own)  # each once


class TiltedBestFirst(GroupedBestFirst):
    """Grouped best-first whose own priorities move by hand, as a learning policy's do
    (`tilt`, by URL id modulo 3): queued URLs keep their rank until ranked again."""

    def __init__(self) -> None:
        super().__init__()
        self.tilt = [0.0, 0.0, 0.0]
        self.rank: dict[int, float] = {}  # each URL's own priority when last ranked

    def own_priority(self, candidate: Candidate) -> float:
        self.ranked += 1
        self.rank[candidate.url_id] = candidate.score + self.tilt[candidate.url_id % 3]
        return self.rank[candidate.url_id]

    def own_priorities(self, candidates: Sequence[Candidate]) -> np.ndarray:
        return np.array([self.own_priority(candidate) for candidate in candidates])


def entries_held(frontier: PriorityFrontier) -> int:
    return sum(len(queue) for queues in frontier._queues.values() for _, queue in queues.items())


def test_a_host_is_re_ranked_in_slices_each_ranking_its_share() -> None:
    frontier = TiltedBestFirst()
    for url_id in range(10):
        frontier.push(
            Candidate(url_id, f"http://a/{'xy'[url_id % 2]}/{url_id}", "a", 0, url_id / 10)
        )
    frontier.tilt = [0.0, -1.0, -2.0]  # ids divisible by 3 first, then the others
    frontier.ranked = 0
    assert frontier.reprioritize_slice("a", 4) == (4, False)
    assert frontier.ranked == 4
    assert frontier.reprioritize_slice("a", 4) == (4, False)
    assert frontier.reprioritize_slice("a", 4) == (2, True)
    assert frontier.ranked == 10
    assert entries_held(frontier) == 10  # the old entries are gone with the round
    assert drain(frontier) == [9, 6, 3, 0, 7, 4, 1, 8, 5, 2]
    frontier.push(candidate(11))
    assert frontier.reprioritize_slice("a", 4) == (1, True)  # within the limit: whole


@settings(max_examples=300)
@given(
    frontier_lives(
        st.tuples(st.just("tilt"), st.just(""), st.sampled_from("012"), st.floats(-1, 1)),
        st.tuples(st.just("slice"), st.sampled_from("ab"), st.just(""), st.sampled_from([1, 2, 3])),
        min_size=20,
    ),
    st.randoms(use_true_random=False),
)
def test_a_queue_re_ranked_in_slices_pops_each_url_once_and_by_its_rank_once_re_ranked(
    steps: list[tuple[str, str, str, float]], rng
) -> None:
    """Slices of hosts re-ranked among pushes, pops, raises, moved priorities, whole
    re-rankings and hosts dropped: each pop is the best by the URLs' ranks as last
    computed, each URL leaves once, the size is right, and once every host is re-ranked
    in slices again no dead entry is held and each pop is the best by the priorities as
    they are."""
    frontier = TiltedBestFirst()
    queued: dict[int, Candidate] = {}
    left: list[int] = []
    for url_id in range(100, 116):  # hosts larger than a slice from the start
        host, group = "ab"[url_id % 2], "xyz"[url_id % 3]
        queued[url_id] = Candidate(url_id, f"http://{host}/{group}/{url_id}", host, 0, url_id / 200)
        frontier.push(queued[url_id])
    pushed = list(queued)
    for number, (step, host, group, value) in enumerate(steps):
        if step == "push":
            item = Candidate(number, f"http://{host}/{group}/{number}", host, 0, value)
            frontier.push(item)
            queued[number] = item
            pushed.append(number)
        elif step == "raise" and queued:
            url_id = rng.choice(sorted(queued))
            if frontier.raise_score(url_id, value):
                queued[url_id] = replace(queued[url_id], score=value)
        elif step == "pop":  # the best by each URL's rank when it was last ranked
            item = pop_the_best(frontier, always, frontier.rank, queued)
            if item is not None:
                left.append(item.url_id)
        elif step == "tilt":
            frontier.tilt[int(group)] = value
        elif step == "slice":
            frontier.reprioritize_slice(host, int(value))
        elif step == "rerank":
            frontier.reprioritize_host(host)
        elif step == "drop":
            for item in frontier.drop_host(host):
                assert queued.pop(item.url_id) == item
                left.append(item.url_id)
        assert len(frontier) == len(queued)
    for host in "ab":  # the round under way ends, and a whole new one is made
        for _ in range(2):
            while not frontier.reprioritize_slice(host, 2)[1]:
                pass
    assert entries_held(frontier) == len(queued)
    assert frontier._rounds == {}  # nothing kept of the rounds ended
    own = {url_id: item.score + frontier.tilt[url_id % 3] for url_id, item in queued.items()}
    while queued:
        left.append(pop_the_best(frontier, always, own, queued).url_id)
    assert frontier.pop(always) is None
    assert sorted(left) == sorted(pushed)


def test_a_raise_leaves_breadth_first_order_as_it_was() -> None:
    frontier = BreadthFirst()
    for url_id in range(4):
        frontier.push(candidate(url_id, depth=1))
    assert frontier.raise_score(0, 0.9)
    popped = []
    while (item := frontier.pop(always)) is not None:
        popped.append((item.url_id, item.score))
    assert popped == [(0, 0.9), (1, 0.0), (2, 0.0), (3, 0.0)]


def test_a_candidate_pushed_back_ahead_goes_before_its_equals() -> None:
    """A URL whose host's turn went to robots.txt takes its place back, not the last
    place among equals."""
    frontier = BreadthFirst()
    for url_id in (1, 2, 3):
        frontier.push(candidate(url_id))
    first = frontier.pop(always)
    assert first is not None
    frontier.push_ahead(first)
    frontier.push(candidate(4))
    assert drain(frontier) == [1, 2, 3, 4]
