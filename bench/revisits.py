"""Re-visits, live: collected worth per period under each re-visit policy, and how well
the crawler learns its sources' arrival rates.

The testbed serves the four sources of Avrachenkov & Borkar's example (their xi halved,
so an item's worth is also the share of topic words on its page; mu per period as in
the paper; `--rate` items a period instead of 250). The crawler re-visits one source a
period (budget 1), politeness off, with each source's half-life set from its mu; it
learns Lambda and xi itself. The ledger credits each item's worth at its first fetch;
beside it, the same items' worth when their source's page first listed them, which is
what the model credits to a re-visit, and the median lag from listing to fetch.

For the rates: the arrival rate the crawler plans with for each source (its totals as
saved in the crawl's database, read while it runs, through `learned_rates`) after 5, 20
and 100 re-visits of that source, and at the end, against the true rate.

    python bench/revisits.py [--period 0.5] [--periods 240] [--rate 10] [--seeds 0 1 2] [--with-web]
        [--plot docs/bench/revisits.png]

--plot draws the worth collected over time under each policy (the mean over seeds).
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import contextlib
import math
import statistics
import tempfile
from dataclasses import dataclass

import sqlalchemy.exc
from prometheus_client import CollectorRegistry

import storage
from crawler.config import CrawlConfig
from crawler.frontier.revisits import learned_rates
from crawler.service import run_crawl
from policies.revisit.ephemeral import Source, simulate
from testbed.server import Testbed
from testbed.sources import EphemeralSource
from testbed.web import WebSpec

PAPER = [(1.0, 0.7), (0.7, 0.35), (0.2, 0.7), (0.08, 0.21)]  # (xi, mu per period)
POLICIES = ("whittle", "greedy", "round-robin")
CHECKPOINTS = (5, 20, 100)


def sources(period: float, rate: float) -> list[EphemeralSource]:
    return [EphemeralSource(xi / 2, mu / period, rate / period) for xi, mu in PAPER]


@dataclass
class RunResult:
    collected: float  # worth a period, at each item's first fetch (the ledger)
    at_listing: float  # the same items' worth when their source's page first listed them
    lag: float  # median seconds from that listing to the item's fetch
    errors: dict[int, list[float]]  # relative errors of the crawler's rates after n re-visits
    final: list[float]  # relative errors of the crawler's rates at the end
    worths: list[float]  # the crawler's xi of each source: its items' mean relevance
    ledger: list[tuple[float, float]]  # (seconds since the start, worth) of each item fetched


async def run(
    policy: str, seed: int, *, period: float, periods: int, rate: float, with_web: bool
) -> RunResult:
    specs = sources(period, rate)
    async with Testbed(WebSpec(pages=60, hosts=4, seed=seed), sources=specs) as bed:
        with tempfile.TemporaryDirectory() as scratch:
            db = f"sqlite+aiosqlite:///{scratch}/revisits.db"
            source_urls = tuple(bed.source_url(i) for i in range(len(specs)))
            config = CrawlConfig(
                # the sources alone, as in the model; or also the static web's home page,
                # which then is a source too, one that never publishes
                seeds=tuple(bed.seeds) if with_web else source_urls,
                source_min_links=20 if with_web else 1_000_000,
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
            truth = {url: spec.arrival_rate for url, spec in zip(source_urls, specs, strict=True)}
            errors: dict[int, list[float]] = {n: [] for n in CHECKPOINTS}
            watch = asyncio.create_task(watch_rates(db, period, truth, errors))
            try:
                await run_crawl(config, registry=CollectorRegistry(), handle_signals=False)
            finally:
                watch.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await watch
            records = await load_sources(db)
            learned = {s.url: s for s in records}
            rates = learned_rates(records, period=period)
        at_listing, lags = listing_worth(bed, specs)
        result = RunResult(
            collected=bed.sources.collected() / periods,
            at_listing=at_listing / periods,
            lag=statistics.median(lags) if lags else math.nan,
            errors=errors,
            final=[abs(rates[url] - rate) / rate for url, rate in truth.items() if url in rates],
            worths=[
                record.worth_total / max(record.worth_items, 1)
                for record in (learned[bed.source_url(i)] for i in range(len(specs)))
            ],
            ledger=sorted((entry.time, entry.worth) for entry in bed.sources.ledger),
        )
    return result


def listing_times(bed: Testbed, source: int) -> list[float]:
    """When the source's page was served (seconds since the start), 304s included."""
    return [
        r.finished - bed.started
        for r in bed.requests
        if r.path == f"/s/{source}" and r.status in (200, 304)
    ]


def listing_worth(bed: Testbed, specs: list[EphemeralSource]) -> tuple[float, list[float]]:
    """The fetched items' worth when their source's page first listed them (what the
    paper's model credits to the re-visit), and the lags from that listing to the fetch."""
    served = [listing_times(bed, i) for i in range(len(specs))]
    total, lags = 0.0, []
    for entry in bed.sources.ledger:
        arrival = bed.sources.arrival_times(entry.source)[entry.item]
        times = served[entry.source]
        first = bisect.bisect_left(times, arrival)
        if first == len(times) or times[first] > entry.time:
            continue  # not found through its source's page
        lag = entry.time - times[first]
        lags.append(lag)
        total += entry.worth * math.exp(specs[entry.source].mu * lag)
    return total, lags


async def load_sources(db: str) -> list[storage.SourceRecord]:
    engine = storage.open_engine(db)
    try:
        async with engine.connect() as connection:
            return await storage.load_sources(connection)
    finally:
        await engine.dispose()


async def watch_rates(
    db: str, period: float, truth: dict[str, float], errors: dict[int, list[float]]
) -> None:
    """Read the crawler's sources as it saves them and note the relative error of the rate
    it plans with for each source when its re-visits reach a checkpoint."""
    noted: set[tuple[str, int]] = set()
    while True:
        await asyncio.sleep(period / 10)  # a source is re-visited once a period at most
        try:
            records = await load_sources(db)
        except sqlalchemy.exc.OperationalError:  # the crawl has not made its tables yet
            continue
        rates = learned_rates(records, period=period)
        for record in records:
            key = (record.url, record.visits)
            if record.url in truth and record.visits in errors and key not in noted:
                noted.add(key)
                error = abs(rates[record.url] - truth[record.url]) / truth[record.url]
                errors[record.visits].append(error)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--period", type=float, default=0.5)
    parser.add_argument("--periods", type=int, default=240)
    parser.add_argument("--rate", type=float, default=10.0, help="items a period per source")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument(
        "--with-web", action="store_true", help="seed the static web too (its pages become sources)"
    )
    parser.add_argument("--plot", help="draw the worth collected over time here (a PNG file)")
    args = parser.parse_args()
    print(
        f"{len(PAPER)} sources, period {args.period} s, {args.periods} periods, "
        f"{args.rate:g} items a period each, budget 1"
        + (", with the static web" if args.with_web else "")
    )
    print("worth a period: collected (ledger) / at the listing / median lag listing->fetch")
    print(f"{'seed':>4} " + " ".join(f"{name:>26}" for name in POLICIES))
    results: dict[str, list[RunResult]] = {name: [] for name in POLICIES}
    for seed in args.seeds:
        row = []
        for policy in POLICIES:
            result = await run(
                policy,
                seed,
                period=args.period,
                periods=args.periods,
                rate=args.rate,
                with_web=args.with_web,
            )
            results[policy].append(result)
            row.append(
                f"{result.collected:.3f} / {result.at_listing:.3f} / {result.lag * 1000:.0f} ms"
            )
        print(f"{seed:>4} " + " ".join(f"{cell:>26}" for cell in row))
    means = [
        f"{statistics.mean(r.collected for r in results[p]):.3f} / "
        f"{statistics.mean(r.at_listing for r in results[p]):.3f}"
        for p in POLICIES
    ]
    print("mean " + " ".join(f"{cell:>26}" for cell in means))
    everything = [r for runs in results.values() for r in runs]
    truth = [Source(xi / 2, mu, args.rate) for xi, mu in PAPER]
    learned_xi = [statistics.mean(r.worths[i] for r in everything) for i in range(len(PAPER))]
    believed = [
        Source(xi, source.mu, source.arrival_rate)
        for xi, source in zip(learned_xi, truth, strict=True)
    ]
    for label, belief in (("rates known", truth), ("the crawler's xi", believed)):
        model = [
            simulate(
                truth,
                budget=1,
                periods=20_000,
                policy=policy,
                stochastic=True,
                seed=0,
                believed=belief,
            ).average_reward
            for policy in POLICIES
        ]
        print("model" + " ".join(f"{value:>26.3f}" for value in model) + f"  (eq. 19, {label})")
    print(
        "the crawler's xi (mean relevance of items): "
        + ", ".join(f"{xi:.3f}" for xi in learned_xi)
        + " for "
        + ", ".join(f"{s.xi:g}" for s in truth)
    )
    print("relative error of the crawler's arrival rates (median over sources and runs):")
    for n in CHECKPOINTS:
        errors = [e for r in everything for e in r.errors[n]]
        if errors:
            print(f"  after {n:>3} re-visits: {statistics.median(errors):.3f} ({len(errors)})")
        else:
            print(f"  after {n:>3} re-visits: no source was re-visited that often")
    final = [e for r in everything for e in r.final]
    print(f"  at the end: {statistics.median(final):.3f} ({len(final)})")
    if args.plot:
        plot_collected(results, args)


def plot_collected(results: dict[str, list[RunResult]], args: argparse.Namespace) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    grid = np.linspace(0, args.periods, 200)  # in periods
    figure, axes = plt.subplots(figsize=(7, 4))
    for policy, runs in results.items():
        curves = []
        for run_result in runs:
            times = np.array([t for t, _ in run_result.ledger]) / args.period
            worth = np.cumsum([w for _, w in run_result.ledger])
            index = np.searchsorted(times, grid, side="right")
            curves.append(np.concatenate([[0.0], worth])[index])
        axes.plot(grid, np.mean(curves, axis=0), label=policy)
    axes.set(xlabel="periods", ylabel="worth collected (sum of items' relevance)")
    axes.set_title(
        f"Re-visits: budget 1 a period, {len(PAPER)} sources, mean of {len(args.seeds)} seeds",
        fontsize=10,
    )
    axes.grid(alpha=0.3)
    axes.legend()
    figure.tight_layout()
    figure.savefig(args.plot, dpi=100)
    print(f"plotted {args.plot}")


if __name__ == "__main__":
    asyncio.run(main())
