"""Re-visits, live: collected worth per period under each re-visit policy, and how well
the crawler learns its sources' arrival rates.

The testbed serves the four sources of Avrachenkov & Borkar's example (their xi halved,
so an item's worth is also the share of topic words on its page; mu per period as in
the paper; `--rate` items a period instead of 250). The crawler re-visits one source a
period (budget 1), politeness off, with each source's half-life set from its mu; it
learns Lambda and xi itself. The ledger credits each item's worth at its first fetch.

For the rates: from the re-visits the crawler made (the server's log) and the items
each could see (at most the listing's 100), the crawler's estimator (a Poisson rate
with a prior of one item a period) after 5, 20 and 100 re-visits, against the true rate.

    python bench/revisits.py [--period 0.5] [--periods 240] [--rate 10] [--seeds 0 1 2]
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import itertools
import math
import statistics
import tempfile

from prometheus_client import CollectorRegistry

import storage
from crawler.config import CrawlConfig
from crawler.service import run_crawl
from crawler.testbed import Testbed
from crawler.testbed_sources import LISTING, EphemeralSource
from crawler.testbed_web import WebSpec
from policies.ephemeral import Source, simulate
from policies.source_rates import PoissonRate

PAPER = [(1.0, 0.7), (0.7, 0.35), (0.2, 0.7), (0.08, 0.21)]  # (xi, mu per period)
POLICIES = ("whittle", "greedy", "round-robin")
CHECKPOINTS = (5, 20, 100)


def sources(period: float, rate: float) -> list[EphemeralSource]:
    return [EphemeralSource(xi / 2, mu / period, rate / period) for xi, mu in PAPER]


async def run(
    policy: str, seed: int, *, period: float, periods: int, rate: float
) -> tuple[float, dict[int, list[float]], list[float]]:
    """Worth collected per period; relative rate errors by visits; final crawler errors."""
    specs = sources(period, rate)
    async with Testbed(WebSpec(pages=60, hosts=4, seed=seed), sources=specs) as bed:
        with tempfile.TemporaryDirectory() as scratch:
            db = f"sqlite+aiosqlite:///{scratch}/revisits.db"
            config = CrawlConfig(
                seeds=tuple(bed.seeds),
                topic=bed.topic,
                db=db,
                delay=0.0,
                concurrency=8,
                per_host_concurrency=8,  # politeness off: a source's items come at once
                duration=periods * period,
                metrics_port=0,
                allow_private_networks=True,
                allowed_domains=tuple(bed.hostnames),
                revisit=policy,
                revisit_period=period,
                revisit_budget=1,
                source_half_lives=tuple(
                    f"{bed.source_url(i)}={math.log(2) / spec.mu}" for i, spec in enumerate(specs)
                ),
            )
            await run_crawl(config, registry=CollectorRegistry(), handle_signals=False)
            engine = storage.open_engine(db)
            async with engine.connect() as connection:
                learned = {s.url: s for s in await storage.load_sources(connection)}
            await engine.dispose()
        collected = bed.sources.collected() / periods
        errors = rate_errors(bed, specs, period)
    final = [
        abs(record.items / record.exposure - spec.arrival_rate) / spec.arrival_rate
        for i, spec in enumerate(specs)
        if (record := learned.get(bed.source_url(i))) is not None and record.exposure > 0
    ]
    return collected, errors, final


def rate_errors(
    bed: Testbed, specs: list[EphemeralSource], period: float
) -> dict[int, list[float]]:
    """Relative errors of the rate estimate after each checkpoint's number of re-visits."""
    errors: dict[int, list[float]] = {n: [] for n in CHECKPOINTS}
    for i, spec in enumerate(specs):
        times = [
            r.started - bed.started
            for r in bed.requests
            if r.path == f"/s/{i}" and r.status in (200, 304)
        ]
        arrivals = bed.sources.arrival_times(i)
        estimator = PoissonRate(prior_rate=1 / period, prior_weight=period)
        for visits, (before, after) in enumerate(itertools.pairwise(times), 1):
            seen = bisect.bisect_right(arrivals, after) - bisect.bisect_right(arrivals, before)
            estimator.partial_fit([min(seen, LISTING)], [after - before])
            if visits in errors:
                error = abs(estimator.rate_ - spec.arrival_rate) / spec.arrival_rate
                errors[visits].append(error)
    return errors


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--period", type=float, default=0.5)
    parser.add_argument("--periods", type=int, default=240)
    parser.add_argument("--rate", type=float, default=10.0, help="items a period per source")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    args = parser.parse_args()
    print(
        f"{len(PAPER)} sources, period {args.period} s, {args.periods} periods, "
        f"{args.rate:g} items a period each, budget 1"
    )
    print("worth collected a period (ledger):")
    print(f"{'seed':>4} " + " ".join(f"{name:>12}" for name in POLICIES))
    errors: dict[int, list[float]] = {n: [] for n in CHECKPOINTS}
    final: list[float] = []
    totals: dict[str, list[float]] = {name: [] for name in POLICIES}
    for seed in args.seeds:
        row = []
        for policy in POLICIES:
            collected, by_visits, last = await run(
                policy, seed, period=args.period, periods=args.periods, rate=args.rate
            )
            row.append(collected)
            totals[policy].append(collected)
            for n, values in by_visits.items():
                errors[n].extend(values)
            final.extend(last)
        print(f"{seed:>4} " + " ".join(f"{value:>12.3f}" for value in row))
    print("mean " + " ".join(f"{statistics.mean(totals[p]):>12.3f}" for p in POLICIES))
    model = [
        simulate(
            [Source(xi / 2, mu, args.rate) for xi, mu in PAPER],
            budget=1,
            periods=20_000,
            policy=policy,
            stochastic=True,
            seed=0,
        ).average_reward
        for policy in POLICIES
    ]
    print("model" + " ".join(f"{value:>12.3f}" for value in model) + "  (eq. 19, known rates)")
    print("relative error of the learned arrival rate (median over sources, runs):")
    for n in CHECKPOINTS:
        if errors[n]:
            print(
                f"  after {n:>3} re-visits: {statistics.median(errors[n]):.3f} ({len(errors[n])})"
            )
        else:
            print(f"  after {n:>3} re-visits: no source was re-visited that often")
    print(f"  the crawler's own totals at the end: {statistics.median(final):.3f} ({len(final)})")


if __name__ == "__main__":
    asyncio.run(main())
