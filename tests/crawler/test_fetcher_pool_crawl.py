"""The fetcher pool in a real crawl: estimates and controllers."""

from __future__ import annotations

import math

import pytest
from prometheus_client import CollectorRegistry

from crawler.testbed import ServerSpec, Testbed
from crawler.testbed_web import WebSpec
from policies.mm1k import optimal_fetchers
from tests.crawler.helpers import collection, crawl


@pytest.mark.parametrize("policy", ["mm1k", "mdp"])
async def test_the_modelled_pools_learn_the_rates_and_size_the_pool(
    db_url: str, policy: str
) -> None:
    registry = CollectorRegistry()
    latency = 0.05  # mean seconds the testbed takes to serve a page
    async with Testbed(WebSpec(pages=3000, hosts=6), ServerSpec(latency=latency)) as bed:
        await crawl(
            db_url,
            bed.seeds,
            registry=registry,
            allowed_domains=tuple(bed.hostnames),
            fetchers=policy,
            buffer=8,
            gamma=1.0,
            concurrency=40,
            per_host_concurrency=40,
            max_pages=900,
        )

    def value(name: str) -> float:
        sample = registry.get_sample_value(name)
        assert sample is not None, name
        return sample

    arrival, service = value("crawler_fetch_arrival_rate"), value("crawler_processor_service_rate")
    # one fetcher brings a page every latency plus the crawler's own overhead (the
    # server shares the event loop with 40 visits: up to about the latency again)
    assert 0.4 / latency < arrival < 1.05 / latency
    assert value("crawler_fetch_arrival_rate_stddev") < 0.2 * arrival
    assert service > arrival  # processing a page is faster than fetching one
    expected_cost = value("crawler_pool_expected_cost")
    assert math.isfinite(expected_cost)
    assert expected_cost >= 0
    target = value("crawler_fetchers_target")
    assert 0 <= target <= 40
    if policy == "mm1k":  # the static optimum for (about) the final estimates
        ideal = optimal_fetchers(
            arrival_rate=arrival, service_rate=service, buffer=8, gamma=1.0
        ).fetchers
        assert 0.75 * min(ideal, 40) <= target <= 1.3 * min(ideal, 40)
    assert len(await collection(db_url)) == 900
