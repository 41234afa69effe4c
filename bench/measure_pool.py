"""One crawl with one pool policy, in this process; prints its figures as a JSON line.

    python bench/measure_pool.py SEED DB DURATION BUFFER CONCURRENCY FETCHERS GAMMA HOSTS...
FETCHERS is fixed:N, latency, mm1k or mdp; GAMMA is a number or "auto".
"""

from __future__ import annotations

import asyncio
import json
import sys

from prometheus_client import CollectorRegistry

from crawler.config import CrawlConfig
from crawler.service import run_crawl


def main() -> None:
    seed, db, duration, buffer, concurrency, fetchers, gamma, *hosts = sys.argv[1:]
    policy, _, size = fetchers.partition(":")
    registry = CollectorRegistry()
    config = CrawlConfig(
        seeds=(seed,),
        topic="solar energy",
        db=db,
        duration=float(duration),
        buffer=int(buffer),
        concurrency=int(size or concurrency),
        fetchers=policy,
        gamma=None if gamma == "auto" else float(gamma),
        delay=0.0,
        per_host_concurrency=int(size or concurrency),
        metrics_port=0,
        allow_private_networks=True,
        allowed_domains=tuple(hosts),
    )
    summary = asyncio.run(run_crawl(config, registry=registry, handle_signals=False))

    def value(name: str) -> float | None:
        return registry.get_sample_value(name)

    print(
        json.dumps(
            {
                "fetchers": fetchers,
                "seconds": summary.seconds,
                "pages": summary.fetched,
                "idle_seconds": value("crawler_processor_idle_seconds_total"),
                "losses": value("crawler_fetch_losses_total"),
                "arrival_rate": value("crawler_fetch_arrival_rate"),
                "service_rate": value("crawler_processor_service_rate"),
                "final_target": value("crawler_fetchers_target"),
                "expected_cost": value("crawler_pool_expected_cost"),
            }
        )
    )


if __name__ == "__main__":
    main()
