"""One crawl with one pool policy, in this process; prints its figures as a JSON line.

python bench/measure_pool.py --seeds URL... --db DB --fetchers fixed:N|latency|mm1k|mdp
    [--duration S] [--max-pages N] [--buffer K] [--concurrency N] [--gamma G|auto]
    [--full-queue block|drop] [--topic TEXT]
"""

from __future__ import annotations

import argparse
import asyncio
import json

from prometheus_client import CollectorRegistry

from crawler.config import CrawlConfig
from crawler.service import run_crawl


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", nargs="+", required=True)
    parser.add_argument("--hosts", nargs="*", default=[], help="allowed domains")
    parser.add_argument("--db", required=True)
    parser.add_argument("--fetchers", required=True)
    parser.add_argument("--duration", type=float)
    parser.add_argument("--max-pages", type=int)
    parser.add_argument("--buffer", type=int, default=8)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--gamma", default="auto")
    parser.add_argument("--full-queue", default="block")
    parser.add_argument("--topic", default="solar energy")
    args = parser.parse_args()
    policy, _, size = args.fetchers.partition(":")
    registry = CollectorRegistry()
    config = CrawlConfig(
        seeds=tuple(args.seeds),
        topic=args.topic,
        db=args.db,
        duration=args.duration,
        max_pages=args.max_pages,
        buffer=args.buffer,
        concurrency=int(size or args.concurrency),
        fetchers=policy,
        gamma=None if args.gamma == "auto" else float(args.gamma),
        full_queue=args.full_queue,
        delay=0.0,
        per_host_concurrency=int(size or args.concurrency),
        metrics_port=0,
        allow_private_networks=True,
        allowed_domains=tuple(args.hosts),
    )
    summary = asyncio.run(run_crawl(config, registry=registry, handle_signals=False))

    def value(name: str) -> float:
        return registry.get_sample_value(name) or 0.0

    print(
        json.dumps(
            {
                "fetchers": args.fetchers,
                "seconds": summary.seconds,
                "pages": summary.fetched,
                "servers": config.processor_count(),
                "stored": value("crawler_pages_stored_total"),
                "requests": value("crawler_requests_total"),
                "idle_seconds": value("crawler_processor_idle_seconds_total"),
                "losses": value("crawler_fetch_losses_total"),
                "blocked": value("crawler_fetches_blocked_total"),
                "blocked_seconds": value("crawler_fetchers_blocked_seconds_total"),
                "arrival_rate": value("crawler_fetch_arrival_rate"),
                "service_rate": value("crawler_processor_service_rate"),
                "final_target": value("crawler_fetchers_target"),
                "expected_cost": value("crawler_pool_expected_cost"),
            }
        )
    )


if __name__ == "__main__":
    main()
