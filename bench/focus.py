"""Focus of one live crawl per frontier policy: harvest and P on the testbed.

Crawls the testbed (in this process) once per policy and seed, politeness off, and
reads the collection in the order pages were fetched: the harvest rate is the share of
truly relevant pages (ground-truth relevance >= 0.4) among the first N fetched, and P
(O'Meara & Patel, eq. 3) is the sum of recall over the crawl's fetches as a fraction
of the upper bound over as many fetches.

    python bench/focus.py [--pages 20000] [--budget 5000] [--seeds 0 1 2]
        [--policies bfs best-first qlearning] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile

import numpy as np
from prometheus_client import CollectorRegistry

import storage
from crawler.config import CrawlConfig
from crawler.service import run_crawl
from crawler.testbed import Testbed
from crawler.testbed_web import WebSpec
from policies import frontier_policy_names
from policies.quality import schedule_performance, upper_bound

TRULY_RELEVANT = 0.4
CHECKPOINTS = (100, 500, 1000, 5000)


async def crawl_order(policy: str, bed: Testbed, budget: int) -> list[str]:
    """The URLs of the pages a crawl stored, in the order it fetched them."""
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
            rows = [r async for r in storage.iter_export(connection) if r.fetched_at is not None]
        await engine.dispose()
    rows.sort(key=lambda r: r.fetched_at)
    return [r.final_url or r.url for r in rows]


def focus(order: list[str], truth: dict[str, float], budget: int) -> dict[str, float]:
    fetched = np.array([truth.get(url, 0.0) for url in order[:budget]])
    relevance = np.fromiter(truth.values(), dtype=np.float64)
    total = float(relevance.sum())
    report = {
        f"harvest@{n}": float(np.mean(fetched[:n] >= TRULY_RELEVANT))
        for n in CHECKPOINTS
        if n <= len(fetched)
    }
    report["p_over_upper"] = schedule_performance(fetched, total) / upper_bound(
        relevance, len(fetched)
    )
    return report


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pages", type=int, default=20_000)
    parser.add_argument("--budget", type=int, default=5_000)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--policies", nargs="+", default=frontier_policy_names())
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results: dict[str, list[dict[str, float]]] = {name: [] for name in args.policies}
    for seed in args.seeds:
        async with Testbed(WebSpec(pages=args.pages, seed=seed)) as bed:
            truth = {bed.page_url(p): float(bed.web.relevance[p]) for p in range(args.pages)}
            for name in args.policies:
                order = await crawl_order(name, bed, args.budget)
                results[name].append(focus(order, truth, args.budget))
                if not args.json:
                    print(f"seed {seed} {name}: {results[name][-1]}", flush=True)
    medians = {
        name: {key: statistics.median(run[key] for run in runs) for key in runs[0]}
        for name, runs in results.items()
    }
    if args.json:
        print(json.dumps({"runs": results, "medians": medians}))
        return
    keys = list(next(iter(medians.values())))
    print(f"\nmedians over seeds {args.seeds}, testbed of {args.pages} pages")
    print(f"{'policy':<12}" + "".join(f"{key:>15}" for key in keys))
    for name, values in medians.items():
        print(f"{name:<12}" + "".join(f"{values[key]:>15.3f}" for key in keys))


if __name__ == "__main__":
    asyncio.run(main())
