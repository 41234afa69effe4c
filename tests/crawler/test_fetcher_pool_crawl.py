"""The fetcher pool in a real crawl: estimates and controllers."""

from __future__ import annotations

import logging
import statistics
from typing import cast

import pytest
from prometheus_client import CollectorRegistry

from testbed.server import ServerSpec, Testbed
from testbed.web import WebSpec
from tests.crawler.helpers import collection, crawl


def static_costs(arrival: float, service: float, *, buffer: int, gamma: float) -> list[float]:
    """The cost of 1, 2, ... 40 fetchers by the M/M/1/K closed form (Talim et al., eq. 4),
    written out here apart from the code under test: gamma P(empty) + loss rate."""
    costs = []
    for fetchers in range(1, 41):
        rho = fetchers * arrival / service
        empty = 1 / (buffer + 1) if rho == 1 else (1 - rho) / (1 - rho ** (buffer + 1))
        costs.append(gamma * empty + fetchers * arrival * rho**buffer * empty)
    return costs


@pytest.mark.parametrize("policy", ["mm1k", "mdp"])
async def test_the_modelled_pools_learn_the_rates_and_size_the_pool(
    db_url: str, policy: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="crawler.process.pool_control")
    registry = CollectorRegistry()
    buffer, gamma = 8, 1.0
    async with Testbed(WebSpec(pages=3000, hosts=6), ServerSpec(latency=0.05)) as bed:
        await crawl(
            db_url,
            bed.seeds,
            registry=registry,
            allowed_domains=tuple(bed.hostnames),
            fetchers=policy,
            processors=1,  # the paper's single server, whose costs static_costs computes
            buffer=buffer,
            gamma=gamma,
            concurrency=40,
            per_host_concurrency=40,
            max_pages=900,
        )
        served = [r.finished - r.started for r in bed.requests if r.path.startswith("/p/")]

    def value(name: str) -> float:
        sample = registry.get_sample_value(name)
        assert sample is not None, name
        return sample

    arrival, service = value("crawler_fetch_arrival_rate"), value("crawler_processor_service_rate")
    # a fetch lasts the server's answer and the crawler's own overhead (the server shares
    # the event loop with 40 visits and the processor): the estimate, weighted to the
    # last few hundred fetches, is below the rate the server answered those at (0.48 to
    # 0.81 of it, measured on two days), and above 0.4 of it
    server_rate = 1 / statistics.mean(served[-300:])
    spread = 3 * value("crawler_fetch_arrival_rate_stddev")
    assert 0.4 * server_rate < arrival < server_rate + spread
    assert spread < 0.6 * arrival
    assert service > arrival  # processing a page is faster than fetching one
    # the pool is sized for the rates of its last solve, which may lag the last ones
    # published by several cells of the solver's grid (10% wide): solves are paced to a
    # small share of the time, and one may be in flight when the crawl ends. A solution
    # is kept by cell, so it was solved for rates within a cell of the last solve's: the
    # best static pool, by eq. (4), for rates across a cell either way, in steps of a
    # quarter of a cell (its corners alone miss a minimum inside it)
    solves = [r.args for r in caplog.records if r.msg.startswith("fetcher pool solved")]
    assert solves, "the pool was never solved"
    solved_arrival, solved_service, _ = cast(tuple[float, float, int], solves[-1])
    span = [1.1 ** (step / 4) for step in range(-4, 5)]
    nearby = [
        static_costs(solved_arrival * a, solved_service * s, buffer=buffer, gamma=gamma)
        for a in span
        for s in span
    ]
    best_pools = [1 + costs.index(min(costs)) for costs in nearby]
    expected_cost = value("crawler_pool_expected_cost")
    target = value("crawler_fetchers_target")
    if policy == "mm1k":  # the static optimum
        assert min(best_pools) <= target <= max(best_pools)
        assert min(min(c) for c in nearby) <= expected_cost <= max(min(c) for c in nearby)
    else:  # the dynamic policy does at least as well as the best static pool
        assert 0 < expected_cost <= max(min(c) for c in nearby)
        assert 1 <= target <= 40
    assert len(await collection(db_url)) == 900


@pytest.mark.slow
async def test_the_servers_estimated_rate_covers_what_they_delivered(db_url: str) -> None:
    """mu is a server's rate while busy: c servers at mu can deliver at least what the
    crawl's processor delivered (heavy pages on a fast web, so it is busy most of the
    crawl). Timed from each page's taking to its score, a worker's two pages counted each
    other's time, and c mu came out at some two thirds of what was delivered."""
    registry = CollectorRegistry()
    async with Testbed(WebSpec(pages=2000, hosts=4), ServerSpec(paragraphs=60)) as bed:
        summary = await crawl(
            db_url,
            bed.seeds,
            registry=registry,
            allowed_domains=tuple(bed.hostnames),
            processors=2,
            concurrency=32,
            per_host_concurrency=32,
            max_pages=800,
        )
    service = registry.get_sample_value("crawler_processor_service_rate")
    idle = registry.get_sample_value("crawler_processor_idle_seconds_total")
    assert service is not None
    assert idle is not None
    delivered = summary.fetched / summary.seconds
    assert 2 * service >= 0.85 * delivered
    assert 0 <= idle < summary.seconds  # the processor's idle time: at most all of it
