"""The frontier bounded in memory, refilled from a real SQLite database."""

from __future__ import annotations

import copy

import pytest

import storage
from crawler.frontier import frontier_store
from crawler.frontier.frontier_store import BoundedFrontier
from policies import BestFirst, BreadthFirst, Candidate
from policies.frontier.qlearning.frontier import QLearningFrontier
from policies.frontier.qlearning.site_values import SiteValues


async def queued_database(db_url: str, count: int):  # type: ignore[no-untyped-def]
    db = storage.open_engine(db_url)
    await storage.create_schema(db)
    async with db.begin() as connection:
        added = await storage.add_urls(
            connection,
            [
                storage.NewUrl(
                    f"http://a.test/{i}", "a.test", depth=i % 7, score=(i * 37 % 100) / 100
                )
                for i in range(count)
            ],
        )
    return db, added


async def store(db, candidate: Candidate) -> None:  # type: ignore[no-untyped-def]
    async with db.begin() as connection:
        await storage.record_fetches(
            connection,
            [
                storage.FetchRecord(
                    candidate.url_id, None, 200, "text/html", 1, 0.5, None, storage.utc_now(), None
                )
            ],
        )


async def test_memory_holds_the_best_and_the_database_the_rest(db_url: str) -> None:
    db, added = await queued_database(db_url, 50)
    try:
        frontier = BoundedFrontier(BestFirst(), capacity=10)
        assert await frontier.refill(db) == 10
        frontier.spilled = 40
        best = sorted(added, key=lambda q: (-q.score, q.id))
        order = []
        while frontier.queued:
            if frontier.needs_refill():
                await frontier.refill(db)
            candidate = frontier.pop(lambda host: True)
            assert candidate is not None
            assert len(frontier) <= 10
            await store(db, candidate)
            frontier.stored(candidate.url_id)
            order.append(candidate.url_id)
        assert sorted(order) == sorted(q.id for q in added)  # each exactly once
        assert order[:10] == [q.id for q in best[:10]]  # the best came first
    finally:
        await db.dispose()


async def test_urls_read_back_share_one_copy_of_their_hosts_name(db_url: str) -> None:
    db, added = await queued_database(db_url, 30)
    try:
        assert len({id(queued.host) for queued in added}) > 1  # each row its own copy
        frontier = BoundedFrontier(BestFirst(), capacity=30)
        assert await frontier.refill(db) == 30
        hosts = set()
        while (candidate := frontier.pop(lambda host: True)) is not None:
            hosts.add(id(candidate.host))
        assert len(hosts) == 1
    finally:
        await db.dispose()


async def test_new_urls_beyond_the_bound_are_counted_and_put_backs_kept(db_url: str) -> None:
    db, _ = await queued_database(db_url, 5)
    try:
        frontier = BoundedFrontier(BreadthFirst(), capacity=3)
        await frontier.refill(db)
        # more wait in the database: how many, a later refill finds out
        assert (len(frontier), frontier.spilled) == (3, 1)
        first = frontier.pop(lambda host: True)
        assert first is not None
        frontier.push(Candidate(999, "http://a.test/new", "a.test", 1, 0.0))
        frontier.push(Candidate(998, "http://a.test/new2", "a.test", 1, 0.0))
        assert (len(frontier), frontier.spilled) == (3, 2)
        frontier.put_back(first)  # throttled: it comes back although memory is full
        assert len(frontier) == 4
        frontier.put_back(first)  # and only once
        assert len(frontier) == 4
    finally:
        await db.dispose()


async def test_a_new_url_a_refill_read_and_dispatched_first_is_not_queued_again(
    db_url: str,
) -> None:
    """The writer commits new URLs, then hands them back; a refill in between may read
    them from the database and dispatch one before the hand-back arrives."""
    db, added = await queued_database(db_url, 4)
    try:
        frontier = BoundedFrontier(BreadthFirst(), capacity=10)
        frontier.spill_count({"a.test": 4})
        assert await frontier.refill(db) == 4
        dispatched = frontier.pop(lambda host: True)
        assert dispatched is not None
        for queued in added:  # the writer's hand-back, late
            frontier.push(Candidate(queued.id, queued.url, queued.host, queued.depth, queued.score))
        popped = [frontier.pop(lambda host: True) for _ in range(4)]
        assert popped[3] is None
        assert sorted([dispatched.url_id] + [c.url_id for c in popped[:3] if c]) == sorted(
            q.id for q in added
        )
    finally:
        await db.dispose()


async def test_a_refill_gives_each_host_its_share_of_memory(db_url: str) -> None:
    db = storage.open_engine(db_url)
    await storage.create_schema(db)
    try:
        async with db.begin() as connection:
            # host a has the 30 best URLs, b and c the 10 worst each
            rows = [storage.NewUrl(f"http://a.test/{i}", "a.test", 1, 0.9) for i in range(30)]
            for host in ("b.test", "c.test"):
                rows += [storage.NewUrl(f"http://{host}/{i}", host, 1, 0.1) for i in range(10)]
            await storage.add_urls(connection, rows)
        frontier = BoundedFrontier(BestFirst(), capacity=15)
        await frontier.refill(db)
        assert frontier.policy.host_sizes() == {"a.test": 5, "b.test": 5, "c.test": 5}
        # when the other hosts run out, the rest of memory goes to whoever has URLs left
        small = BoundedFrontier(BestFirst(), capacity=40)
        await small.refill(db)
        assert small.policy.host_sizes() == {"a.test": 20, "b.test": 10, "c.test": 10}
        assert small.spilled == 1  # a has more in the database
    finally:
        await db.dispose()


def count_rows_read(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The queued URLs the database hands a refill, counted where the frontier asks."""
    read = [0]
    queued_by_share = storage.queued_by_share

    async def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        async for batch in queued_by_share(*args, **kwargs):
            read[0] += len(batch)
            yield batch

    monkeypatch.setattr(frontier_store.storage, "queued_by_share", counted)
    return read


async def counted_queue(  # type: ignore[no-untyped-def]
    db_url: str, rows: list[storage.NewUrl], monkeypatch: pytest.MonkeyPatch
):
    """A database of these queued URLs, read back in batches of 10, and the count of
    the rows the refills read."""
    monkeypatch.setattr(frontier_store, "REFILL_BATCH", 10)
    db = storage.open_engine(db_url)
    await storage.create_schema(db)
    async with db.begin() as connection:
        await storage.add_urls(connection, rows)
    return db, count_rows_read(monkeypatch)


async def test_a_refill_reads_no_further_than_memory_fills_when_each_host_has_its_share(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # six hosts taking turns down the order, 30 URLs each
    rows = [
        storage.NewUrl(f"http://h{i % 6}/{i}", f"h{i % 6}", 1, 0.9 - i / 1000) for i in range(180)
    ]
    db, read = await counted_queue(db_url, rows, monkeypatch)
    try:
        # 100 URLs for 6 hosts: shares of 17 fill memory with the first 100 in the order
        frontier = BoundedFrontier(BestFirst(), capacity=100)
        assert await frontier.refill(db) == 100
        assert read == [100]
        assert frontier.policy.host_sizes() == {f"h{i}": 17 if i < 4 else 16 for i in range(6)}
        assert frontier.spilled == 1  # more wait in the database
        loaded = {c.url for c in iter(lambda: frontier.pop(lambda host: True), None)}
        assert loaded == {f"http://h{i % 6}/{i}" for i in range(100)}
    finally:
        await db.dispose()


async def test_hosts_with_fewer_urls_than_their_share_cost_no_read_of_the_whole_queue(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a big host and five small ones, whose URLs are the last in the order
    sizes = {"big": 300, "s1": 4, "s2": 4, "s3": 2, "s4": 1, "s5": 1}
    rows = [
        storage.NewUrl(f"http://{host}/{i}", host, 1, 0.9 if host == "big" else 0.1)
        for host, size in sizes.items()
        for i in range(size)
    ]
    db, read = await counted_queue(db_url, rows, monkeypatch)
    try:
        frontier = BoundedFrontier(BestFirst(), capacity=30)  # shares of 5
        assert await frontier.refill(db) == 30
        # each small host all it has, the big one its share and then the rest of memory
        assert frontier.policy.host_sizes() == {**sizes, "big": 18}
        assert read == [30]  # the 312 queued URLs are not all read, nor read twice
        # with half of memory popped, a refill brings the best of the big host back
        popped = [frontier.pop(lambda host: host == "big") for _ in range(15)]
        assert all(popped)
        read[0] = 0
        assert await frontier.refill(db) == 15
        assert frontier.policy.host_sizes() == {**sizes, "big": 18}
        # at most the 30 held (in memory, or dispatched and not stored), the 15 loaded
        # and the rest of their last batch of 10
        assert read[0] <= 50
    finally:
        await db.dispose()


async def test_a_host_whose_urls_in_memory_run_out_is_read_back_alone(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = storage.open_engine(db_url)
    await storage.create_schema(db)
    try:
        async with db.begin() as connection:
            rows = [storage.NewUrl(f"http://{h}/{i}", h, 1, 0.5) for h in "ab" for i in range(30)]
            await storage.add_urls(connection, rows)
            frontier = BoundedFrontier(BestFirst(), capacity=8)
            frontier.spill_count(await storage.count_queued_by_host(connection))
        await frontier.refill(db)
        assert frontier.policy.host_sizes() == {"a": 4, "b": 4}
        assert not frontier.needs_refill()  # memory is full
        # b's URLs in memory are all fetched: half the memory is still a's
        while "b" in frontier.policy.host_sizes():
            candidate = frontier.pop(lambda host: host == "b")
            assert candidate is not None
            await store(db, candidate)
            frontier.stored(candidate.url_id)
        assert len(frontier) == 4  # not below half: no refill of every host for that
        assert frontier.needs_refill()  # but b is read back, alone
        asked: list[list[str]] = []
        queued_of_hosts = storage.queued_of_hosts

        async def counted(connection, hosts, **kwargs):  # type: ignore[no-untyped-def]
            asked.append(list(hosts))
            return await queued_of_hosts(connection, hosts, **kwargs)

        monkeypatch.setattr(frontier_store.storage, "queued_of_hosts", counted)
        assert await frontier.refill(db) == 4
        assert asked == [["b"]]
        assert frontier.policy.host_sizes() == {"a": 4, "b": 4}
        assert frontier.spilled_hosts == {"a": 26, "b": 22}
        assert not frontier.needs_refill()
    finally:
        await db.dispose()


@pytest.mark.parametrize("policy", [BreadthFirst, QLearningFrontier])
async def test_a_host_read_back_alone_comes_in_the_policys_order(db_url: str, policy) -> None:  # type: ignore[no-untyped-def]
    db = storage.open_engine(db_url)
    await storage.create_schema(db)
    try:
        async with db.begin() as connection:
            rows = [
                storage.NewUrl(f"http://{h}/{i}", h, 1 + i % 3, i / 100)
                for h in "ab"
                for i in range(30)
            ]
            await storage.add_urls(connection, rows)
            frontier = BoundedFrontier(policy(), capacity=8)
            frontier.spill_count(await storage.count_queued_by_host(connection))
        await frontier.refill(db)
        while "b" in frontier.policy.host_sizes():
            candidate = frontier.pop(lambda host: host == "b")
            assert candidate is not None
            await store(db, candidate)
            frontier.stored(candidate.url_id)
        assert frontier.needs_refill()
        assert await frontier.refill(db) == 4
        assert frontier.policy.host_sizes() == {"a": 4, "b": 4}
        assert frontier.spilled_hosts["b"] == 22
        # the four the policy ranks first among b's queued URLs
        async with db.connect() as connection:
            queued = await storage.queued_with_parents(connection, limit=100, hosts=["b"])
        ranked = frontier_store.candidate_of
        priorities = frontier.policy.priorities([ranked(q) for q in queued]).tolist()
        best = sorted(
            zip(priorities, queued, strict=True), key=lambda p: (-p[0], p[1].depth, p[1].id)
        )
        expected = {q.url for _, q in best[:4]}
        popped = {frontier.pop(lambda host: host == "b").url for _ in range(4)}  # type: ignore[union-attr]
        assert popped == expected
    finally:
        await db.dispose()


def test_every_host_holds_a_url_in_memory_and_none_more_than_its_share() -> None:
    """Politeness serves each host in turn: a host left in the database alone would wait
    while memory is full of a few hosts' URLs."""
    frontier = BoundedFrontier(BestFirst(), capacity=12)
    for url_id in range(40):  # one host's 40 URLs
        frontier.push(Candidate(url_id, f"http://big/{url_id}", "big", 1, 0.5))
    assert frontier.policy.host_sizes() == {"big": 12}  # the capacity, one host's share
    for host in range(20):  # then twenty hosts more than the capacity
        for url_id in range(3):
            frontier.push(Candidate(1000 + 10 * host + url_id, f"http://h{host}/{url_id}",
                                    f"h{host}", 1, 0.5))  # fmt: skip
    sizes = frontier.policy.host_sizes()
    assert all(sizes[f"h{host}"] >= 1 for host in range(20))
    assert frontier.spilled == 28 + sum(3 - sizes[f"h{host}"] for host in range(20))
    assert frontier.host_share() == 4  # at least MIN_HOST_SHARE, however many hosts


def test_a_queued_url_a_redirect_reached_is_skipped_and_its_features_let_go() -> None:
    policy = QLearningFrontier()
    frontier = BoundedFrontier(policy, capacity=10)
    for url_id, score in ((1, 0.9), (2, 0.5)):
        frontier.push(Candidate(url_id, f"http://a/{url_id}", "a", 1, score))
    frontier.drop([1])  # stored as a redirect's target meanwhile
    assert policy.described == 2
    popped = frontier.pop(lambda host: True)
    assert popped is not None
    assert popped.url_id == 2
    assert policy.described == 1  # and nothing is kept of it


def deep_links_pay(policy: QLearningFrontier) -> QLearningFrontier:
    """A Q-learning frontier whose model has learned, and is sure, that links three or
    more deep, and links from relevant parents, are worth more than their scores say:
    its order is not the score's."""
    model = policy.model
    model.updates_, model.warmup, model.errors_[:] = 1, 0.0, (1.0, 0.0)
    model.counts_[:] = 1e9
    valued = [("d=3", 1.0), ("d=4", 1.0), ("d=5", 1.0), ("p=6", 0.3), ("p=3", 0.05)]
    for token, weight in valued:
        [(index, _)] = model.features([[(token, 1.0)]])
        model.weights_[index] = weight
    return policy


async def drain_with_refills(frontier: BoundedFrontier, db) -> list[Candidate]:  # type: ignore[no-untyped-def]
    popped = []
    while frontier.queued:
        if frontier.needs_refill():
            await frontier.refill(db)
        candidate = frontier.pop(lambda host: True)
        assert candidate is not None
        await store(db, candidate)
        frontier.stored(candidate.url_id)
        popped.append(candidate)
    return popped


async def test_a_refill_brings_urls_back_in_the_policys_own_order(db_url: str) -> None:
    db, added = await queued_database(db_url, 60)
    try:
        policy = deep_links_pay(QLearningFrontier())
        frontier = BoundedFrontier(policy, capacity=10)
        frontier.spill_count({"a.test": 60})
        popped = await drain_with_refills(frontier, db)
        assert sorted(c.url_id for c in popped) == sorted(q.id for q in added)
        # the order of the policy holding them all in memory, not the score's
        index = policy.priorities(popped)
        assert index.tolist() == sorted(index.tolist(), reverse=True)
        assert [c.depth >= 3 for c in popped[:10]] == [True] * 10
        assert [c.url_id for c in popped] != [
            q.id for q in sorted(added, key=lambda q: (-q.score, q.depth, q.id))
        ]
    finally:
        await db.dispose()


async def test_a_url_read_back_has_the_index_it_had_in_memory(db_url: str) -> None:
    """Q-learning values a link by what its parent's fetch showed (the parent's
    relevance, the new links it revealed): a URL read back from the database is valued
    as it was when the fetch revealed it. (The value of its section of the host, which
    moves with the section's tries, is left out here.)"""
    db = storage.open_engine(db_url)
    await storage.create_schema(db)
    try:
        async with db.begin() as connection:
            parents = await storage.add_urls(
                connection,
                [storage.NewUrl(f"http://a.test/p{i}", "a.test", 0, 0.2) for i in range(3)],
            )
            relevance = {parents[0].id: 0.3, parents[1].id: None, parents[2].id: 0.05}
            await storage.record_fetches(
                connection,
                [
                    storage.FetchRecord(
                        p.id,
                        None,
                        200,
                        "text/html",
                        1,
                        relevance[p.id],
                        None,
                        storage.utc_now(),
                        None,
                    )
                    for p in parents
                ],
            )
            revealed = {}
            for parent, count in zip(parents, (3, 12, 40), strict=True):
                revealed[parent.id] = await storage.add_urls(
                    connection,
                    [
                        storage.NewUrl(
                            f"{parent.url}/{i}", "a.test", 1, (i * 7 % 10) / 10, parent.url
                        )
                        for i in range(count)
                    ],
                )
        policy = deep_links_pay(QLearningFrontier(section_values=SiteValues(optimism=0, weight=0)))
        in_memory: dict[int, float] = {}
        for parent in parents:  # each fetch's new links as the crawl described them
            memory = copy.deepcopy(policy)
            children = [_plain(q) for q in revealed[parent.id]]
            memory.on_fetched(_plain(parent), relevance[parent.id] or 0.0, children)
            in_memory.update((child.url_id, memory.priority(child)) for child in children)
        frontier = BoundedFrontier(policy, capacity=100)
        frontier.spill_count({"a.test": len(in_memory)})
        assert await frontier.refill(db) == len(in_memory)
        popped = await drain_with_refills(frontier, db)
        assert policy.priorities(popped) == pytest.approx([in_memory[c.url_id] for c in popped])
        assert len(set(in_memory.values())) > 10  # the features told them apart
    finally:
        await db.dispose()


def _plain(queued: storage.QueuedUrl) -> Candidate:
    return Candidate(queued.id, queued.url, queued.host, queued.depth, queued.score)


async def test_a_raise_moves_a_url_in_memory_now_and_one_in_the_database_when_read_back(
    db_url: str,
) -> None:
    db, added = await queued_database(db_url, 20)
    try:
        frontier = BoundedFrontier(BestFirst(), capacity=4)
        frontier.spill_count({"a.test": 20})
        await frontier.refill(db)
        worst_held = min(
            (q for q in added if frontier.policy.holds(q.id)), key=lambda q: (q.score, -q.id)
        )
        spilled = min(
            (q for q in added if not frontier.policy.holds(q.id)), key=lambda q: (q.score, -q.id)
        )
        raises = [storage.ScoreRaise((worst_held.url, spilled.url), 0.995)]
        async with db.begin() as connection:
            (raised,) = await storage.raise_scores(connection, raises)
        assert sorted(raised) == sorted([worst_held.id, spilled.id])
        assert frontier.raise_scores(raised, 0.995) == 1  # the one memory holds
        first = frontier.pop(lambda host: True)
        assert first is not None
        assert (first.url_id, first.score) == (worst_held.id, 0.995)
        await store(db, first)
        frontier.stored(first.url_id)
        order = await drain_with_refills(frontier, db)
        # the spilled one comes with the first refill that reads it, by its raised score
        assert sorted(c.url_id for c in order) == sorted(q.id for q in added if q is not worst_held)
        (read_back,) = [c for c in order if c.url_id == spilled.id]
        assert read_back.score == 0.995
        assert order.index(read_back) < 4
    finally:
        await db.dispose()
