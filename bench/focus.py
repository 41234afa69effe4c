"""Focus: truly relevant pages among the first N fetched, per frontier policy.

Crawls the testbed (in this process) once per policy and seed, politeness off, and
counts the pages whose ground-truth relevance is at least 0.4.

    python bench/focus.py [--pages 20000] [--budget 1000] [--seeds 0 1 2]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile

from prometheus_client import CollectorRegistry

import storage
from crawler.config import CrawlConfig
from crawler.service import run_crawl
from crawler.testbed import Testbed
from crawler.testbed_web import WebSpec
from policies import frontier_policy_names

TRULY_RELEVANT = 0.4


async def harvest(policy: str, pages: int, budget: int, seed: int) -> tuple[int, int]:
    async with Testbed(WebSpec(pages=pages, seed=seed)) as bed:
        truth = {bed.page_url(p) for p in range(pages) if bed.web.relevance[p] >= TRULY_RELEVANT}
        with tempfile.TemporaryDirectory() as scratch:
            db = f"sqlite+aiosqlite:///{scratch}/focus.db"
            config = CrawlConfig(
                seeds=tuple(bed.seeds),
                topic=bed.topic,
                db=db,
                delay=0.0,
                concurrency=8,
                max_pages=budget,
                policy=policy,
                metrics_port=0,
                allow_private_networks=True,
                allowed_domains=tuple(bed.hostnames),
            )
            await run_crawl(config, registry=CollectorRegistry(), handle_signals=False)
            engine = storage.open_engine(db)
            async with engine.connect() as connection:
                found = {r.final_url or r.url async for r in storage.iter_export(connection)}
            await engine.dispose()
    return len(found & truth), len(truth)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pages", type=int, default=20_000)
    parser.add_argument("--budget", type=int, default=1_000)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    args = parser.parse_args()
    print(
        f"testbed of {args.pages} pages; relevant pages among the first {args.budget} "
        "fetched (ground truth)"
    )
    print(f"{'seed':>4} " + " ".join(f"{name:>11}" for name in frontier_policy_names()))
    for seed in args.seeds:
        counts = [
            await harvest(name, args.pages, args.budget, seed) for name in frontier_policy_names()
        ]
        print(f"{seed:>4} " + " ".join(f"{found:>5} / {total:<4}" for found, total in counts))


if __name__ == "__main__":
    asyncio.run(main())
