"""What lets a crawl resume: a checkpoint saves the hosts changed, the learned models and
a timeline sample in one write, a restart brings them back with the frontier, idle hosts
leave memory once their save has committed, and a daemon of a shared crawl keeps its
models under its own name and merges the others'."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

import storage
from crawler.config import CrawlConfig
from crawler.engine import checkpoints
from crawler.engine.checkpoints import SCORER_STATE, Checkpoints
from crawler.engine.labels import LabelWatch
from crawler.fetch.admission import Admission
from crawler.fetch.politeness import Feedback
from crawler.frontier.frontier_store import BoundedFrontier
from crawler.frontier.revisits import Revisits
from crawler.process.pool_control import PoolControl
from crawler.store.writer import StorageWriter
from crawler.telemetry.metrics import CrawlerMetrics
from policies import BestFirst, TopicScorer
from policies.pool.fetcher_pool import FixedPool
from tests.crawler.engine.helpers import HOSTS, TOPIC, Clock, host_memory, queued, sample

HOST = HOSTS[0]


def scorer(*texts: str, n_features: int | None = None) -> TopicScorer:
    """A topic's scorer that has read these pages."""
    fitted = TopicScorer(**({} if n_features is None else {"n_features": n_features}))
    fitted.fit([TOPIC])
    if texts:
        fitted.partial_fit_counts(fitted.counter_.count(list(texts)))
    return fitted


class Runs:
    """Runs of one crawl on the test's database, each its checkpoints over a writer of
    its own that starts when first asked to."""

    def __init__(self, db: AsyncEngine, metrics: CrawlerMetrics, clock: Clock) -> None:
        self.db, self.metrics, self.clock = db, metrics, clock
        self.writing: dict[StorageWriter, asyncio.Task[None]] = {}

    def __call__(self, *texts: str, daemon: str | None = None, capacity: int = 10) -> Checkpoints:
        """A run whose scorer has read `texts`, remembering `capacity` idle hosts."""
        hosts = host_memory(self.db, self.clock, capacity=capacity)
        admission = Admission(concurrency=1, target=1)
        learning = scorer(*texts)
        return Checkpoints(
            db=self.db,
            frontier=BoundedFrontier(BestFirst(), capacity=100),
            hosts=hosts,
            politeness=hosts.politeness,
            admission=admission,
            revisits=Revisits(
                CrawlConfig(revisit="whittle").revisits, relevance_threshold=0.1, seeds=()
            ),
            scorer=learning,
            labels=LabelWatch(
                db=self.db, scorer=learning, relevance_threshold=0.1, metrics=self.metrics
            ),
            writer=StorageWriter(self.db, on_committed=lambda committed: None),
            pool=PoolControl(FixedPool(max_fetchers=1), self.metrics, admission, buffer=1),
            metrics=self.metrics,
            wake=asyncio.Event(),
            daemon_id=daemon,
            clock=self.clock,
            wall_clock=self.clock.wall,
        )

    def start_writing(self, run: Checkpoints) -> None:
        if run.writer not in self.writing:
            self.writing[run.writer] = asyncio.create_task(run.writer.run())

    async def committed(self, run: Checkpoints) -> None:
        """Wait until `run`'s writer has committed all it was given."""
        self.start_writing(run)
        async with asyncio.timeout(5):
            await run.writer.drained()


@pytest.fixture
async def runs(db: AsyncEngine, metrics: CrawlerMetrics, clock: Clock) -> AsyncIterator[Runs]:
    made = Runs(db, metrics, clock)
    yield made
    for task in made.writing.values():
        task.cancel()
    await asyncio.gather(*made.writing.values(), return_exceptions=True)


@contextlib.asynccontextmanager
async def ticking(run: Checkpoints) -> AsyncIterator[None]:
    """The checkpoints' loop, running for the block."""
    task = asyncio.create_task(run.run())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def until(condition: Callable[[], bool]) -> None:
    """Wait for the checkpoints' ticks, a few seconds at most."""
    for _ in range(1_000):
        if condition():
            return
        await asyncio.sleep(0.005)
    raise AssertionError("the checkpoints never got there")


async def test_a_restart_brings_back_what_the_last_checkpoint_saved(
    db: AsyncEngine, runs: Runs, clock: Clock, metrics: CrawlerMetrics
) -> None:
    first = runs("solar panels on roofs", "energy from the sun")
    first.politeness.start(HOST, clock.now)
    first.politeness.finish(HOST, clock.now, Feedback.THROTTLED, retry_after=600.0)
    first.hosts.changed(HOST)
    *_, news = await queued(db, *(f"http://{HOSTS[1]}/{n}" for n in range(3)))
    async with db.begin() as connection:  # a source an earlier checkpoint saved
        source = storage.SourceRecord(news.url_id, news.url, news.host, 0, clock.wall())
        await storage.save_sources(connection, [source])
    first.save()
    await runs.committed(first)

    clock.now += 60.0  # a restart a minute later
    second = runs()
    await second.restore()
    assert not second.politeness.ready(HOST, clock.now)  # still closed, for 540 s more
    assert second.politeness.ready(HOST, clock.now + 541.0)
    assert second.scorer.get_state() == first.scorer.get_state()
    assert sorted(second.frontier.hosts()) == [HOSTS[1]]
    assert second.frontier.queued == len(second.frontier) == 3
    assert list(second.revisits.sources) == [news.url_id]
    assert sample(metrics, "crawler_sources") == 1


async def test_checkpoints_save_every_interval_and_sample_the_timeline_between(
    db: AsyncEngine,
    runs: Runs,
    clock: Clock,
    metrics: CrawlerMetrics,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(checkpoints, "GAUGE_INTERVAL", 0.005)
    run = runs("solar panels on roofs")

    async def saved() -> tuple[int, bytes | None]:
        async with db.connect() as connection:
            timeline = await storage.load_timeline(connection)
            return len(timeline), await storage.load_learned_state(connection, SCORER_STATE)

    runs.start_writing(run)
    async with ticking(run):
        await until(lambda: sample(metrics, "crawler_asyncio_tasks") > 0)  # it ticks
        clock.now += checkpoints.TIMELINE_INTERVAL
        await until(lambda: run.writer.committed == 1)
        assert await saved() == (1, None)  # a sample alone
        clock.now += checkpoints.CHECKPOINT_INTERVAL
        await until(lambda: run.writer.committed == 2)
        assert await saved() == (2, run.scorer.get_state())  # a sample and the models


async def test_idle_hosts_leave_memory_once_their_save_has_committed(
    runs: Runs, clock: Clock, metrics: CrawlerMetrics, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(checkpoints, "GAUGE_INTERVAL", 0.005)
    run = runs(capacity=0)
    for host in HOSTS:
        run.politeness.start(host, clock.now)
        run.politeness.finish(host, clock.now)
        run.hosts.changed(host)
    run.admission.wait_began(HOSTS[1])  # a visit waits for its turn
    clock.now += 2.0  # their delays are over: idle, but not saved
    async with ticking(run):
        await until(lambda: sample(metrics, "crawler_hosts_in_memory") == 2)
        clock.now += checkpoints.CHECKPOINT_INTERVAL
        await until(lambda: run.writer.pending == 1)  # saved, not yet committed
        await asyncio.sleep(0.05)  # ten ticks
        assert sample(metrics, "crawler_hosts_in_memory") == 2
        runs.start_writing(run)
        await until(lambda: sample(metrics, "crawler_hosts_in_memory") == 1)
    assert HOSTS[0] not in run.hosts
    assert HOSTS[1] in run.hosts  # its visit will want its state


async def test_a_daemon_keeps_its_models_apart_and_merges_the_others(
    db: AsyncEngine, runs: Runs, caplog: pytest.LogCaptureFixture
) -> None:
    other = scorer("solar panels on roofs", "wind and solar", "solar cells")
    async with db.begin() as connection:
        await storage.save_learned_state(connection, f"{SCORER_STATE}@two", other.get_state())
    one = runs("energy from the sun", daemon="one")
    own, documents = one.scorer.get_state(), one.scorer.n_documents_ + other.n_documents_
    await one.merge_others()
    assert one.scorer.n_documents_ == documents  # scores with the whole crawl's counts
    assert one.scorer.get_state() == own  # and saves only its own
    one.save()
    await runs.committed(one)
    async with db.connect() as connection:
        saved = await storage.load_learned_states(connection, SCORER_STATE)
    assert saved.keys() == {f"{SCORER_STATE}@one", f"{SCORER_STATE}@two"}
    assert saved[f"{SCORER_STATE}@one"] == own
    await one.merge_others()
    assert one.scorer.n_documents_ == documents  # its own not counted twice

    unreadable = scorer("solar", n_features=2**10).get_state()  # another model's size
    async with db.begin() as connection:
        await storage.save_learned_state(connection, f"{SCORER_STATE}@three", unreadable)
    with caplog.at_level(logging.WARNING):
        await one.merge_others()  # the crawl goes on
    assert "could not merge the other daemons' models" in caplog.text
    assert one.scorer.n_documents_ == documents  # as it was
