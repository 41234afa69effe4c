"""Re-visiting sources in live crawls of the testbed's ephemeral sources."""

from __future__ import annotations

import math
from collections import Counter

import pytest
from prometheus_client import CollectorRegistry

import storage
from crawler.config import ConfigError, build_config
from crawler.testbed import Testbed
from crawler.testbed_sources import EphemeralSource
from crawler.testbed_web import WebSpec
from tests.crawler.helpers import collection, crawl

SMALL_WEB = WebSpec(pages=60, hosts=2, seed=5)


async def load_sources(db_url: str) -> dict[str, storage.SourceRecord]:
    engine = storage.open_engine(db_url)
    try:
        async with engine.connect() as connection:
            return {s.url: s for s in await storage.load_sources(connection)}
    finally:
        await engine.dispose()


async def crawl_sources(
    db_url: str,
    bed: Testbed,
    *,
    policy: str,
    duration: float,
    registry: CollectorRegistry | None = None,
    **settings: object,
) -> None:
    await crawl(
        db_url,
        bed.seeds,
        allowed_domains=tuple(bed.hostnames),
        registry=registry,
        revisit=policy,
        revisit_period=0.3,
        revisit_budget=1,
        interest_half_life=1.0,
        duration=duration,
        **settings,
    )


def source_requests(bed: Testbed, source: int) -> list[int]:
    """Statuses of the requests for a source's page, in order."""
    return [r.status for r in bed.requests if r.path == f"/s/{source}"]


async def test_sources_are_revisited_and_their_new_items_fetched(db_url: str) -> None:
    registry = CollectorRegistry()
    specs = [EphemeralSource(0.5, 0.7, 4.0), EphemeralSource(0.3, 0.7, 4.0)]
    async with Testbed(SMALL_WEB, sources=specs) as bed:
        await crawl_sources(db_url, bed, policy="round-robin", duration=4.0, registry=registry)
        item_paths = [r.path for r in bed.requests if "/item/" in r.path]
        ledger = list(bed.sources.ledger)
        published = [bed.sources.published(i, bed.now()) for i in range(2)]
    sources = await load_sources(db_url)
    for i in range(2):
        source = sources[bed.source_url(i)]
        assert source.visits >= 3
        assert 0 < source.items <= published[i]
        assert source.worth_items > 0  # its items were fetched and scored
    assert {entry.source for entry in ledger} == {0, 1}
    assert max(Counter(item_paths).values()) == 1  # each item fetched once
    revisits = sum(s.visits for s in sources.values())
    used = registry.get_sample_value("crawler_fetch_budget_used_total", {"use": "revisit"})
    assert used == revisits
    found = sum(
        registry.get_sample_value("crawler_revisits_total", {"result": r}) or 0
        for r in ("new_items", "unchanged", "not_modified")
    )
    assert found == revisits
    assert registry.get_sample_value("crawler_revisit_new_items_total") == sum(
        s.items for s in sources.values()
    )
    assert registry.get_sample_value("crawler_sources") == len(sources)


async def test_an_unchanged_source_answers_304_and_keeps_its_record(db_url: str) -> None:
    registry = CollectorRegistry()
    quiet = EphemeralSource(0.5, 0.7, 0.001)  # publishes about once in twenty minutes
    async with Testbed(SMALL_WEB, sources=[quiet]) as bed:
        await crawl_sources(db_url, bed, policy="round-robin", duration=3.0, registry=registry)
        statuses = source_requests(bed, 0)
    assert statuses[0] == 200
    assert statuses.count(304) >= 3  # the ETag came back and matched
    not_modified = registry.get_sample_value("crawler_revisits_total", {"result": "not_modified"})
    assert not_modified == statuses.count(304)
    record = (await collection(db_url))[bed.source_url(0)]
    assert record.title == "Source 0"
    assert record.fetch_count == statuses.count(200)  # a 304 rewrites nothing


async def test_learned_arrival_rates_approach_the_true_ones(db_url: str) -> None:
    specs = [EphemeralSource(0.5, 0.7, 20.0), EphemeralSource(0.5, 0.7, 5.0)]
    async with Testbed(SMALL_WEB, sources=specs) as bed:
        await crawl_sources(db_url, bed, policy="round-robin", duration=5.0)
    sources = await load_sources(db_url)
    for i, spec in enumerate(specs):
        source = sources[bed.source_url(i)]
        assert source.visits >= 5
        # the items counted are Poisson with mean rate * exposure: within three deviations
        expected = spec.arrival_rate * source.exposure
        assert abs(source.items - expected) <= 3 * math.sqrt(expected)


async def test_a_resumed_crawl_keeps_what_it_learned_of_its_sources(db_url: str) -> None:
    specs = [EphemeralSource(0.5, 0.7, 4.0)]
    async with Testbed(SMALL_WEB, sources=specs) as bed:
        await crawl_sources(db_url, bed, policy="greedy", duration=2.0)
        first = (await load_sources(db_url))[bed.source_url(0)]
        await crawl_sources(db_url, bed, policy="greedy", duration=2.0)
        statuses = source_requests(bed, 0)
    second = (await load_sources(db_url))[bed.source_url(0)]
    assert first.visits >= 2
    assert second.visits > first.visits
    assert second.items > first.items
    assert second.exposure > first.exposure
    # the second run re-visited without fetching the source afresh first
    assert len(statuses) == 1 + second.visits


async def test_whittle_re_visits_the_source_worth_more_more_often(db_url: str) -> None:
    rich, poor = EphemeralSource(0.6, 0.7, 8.0), EphemeralSource(0.03, 0.7, 8.0)
    visits = {}
    for policy in ("whittle", "round-robin"):
        url = db_url.replace("crawl.db", f"{policy}.db")
        async with Testbed(SMALL_WEB, sources=[rich, poor]) as bed:
            await crawl_sources(url, bed, policy=policy, duration=5.0)
        sources = await load_sources(url)
        visits[policy] = [sources[bed.source_url(i)].visits for i in range(2)]
    assert visits["whittle"][0] >= 2 * visits["whittle"][1]
    assert abs(visits["round-robin"][0] - visits["round-robin"][1]) <= 2


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"revisit": "sometimes"}, "setting 'revisit' must be one of whittle, greedy"),
        ({"revisit_period": 0}, "setting 'revisit_period' must be greater than 0"),
        ({"interest_half_life": "inf"}, "setting 'interest_half_life' must be finite"),
        ({"source_min_links": 0}, "setting 'source_min_links' must be greater than 0"),
    ],
)
def test_bad_revisit_settings_are_named(values: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        build_config(flag_values=values, environ={})
