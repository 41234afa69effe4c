"""What a crawl does around its frontier's refills: the testbed crawled with a small
frontier memory, each refill timed, and the fetches by outcome counted every half
second, so that the rate and the share of duplicates just before the refills can be
set against the rest of the crawl.

    python bench/refill_timeline.py [--pages 100000] [--frontier-memory 10000] \
        [--policy best-first]

It prints each refill (pages fetched when it began, URLs loaded, wall seconds), then,
over the crawl after the first refill, the median rate of pages stored and the
fetches by outcome in the 2 seconds before each refill, in the 2 seconds after, and
over all of it ("none" where refills come closer together than that); and how many
database connections the crawl opened (each a thread with aiosqlite).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from itertools import pairwise
from pathlib import Path

from prometheus_client import CollectorRegistry
from sqlalchemy import event
from sqlalchemy.pool import Pool

sys.path.insert(0, str(Path(__file__).resolve().parent))
from testbed_process import served_testbed

from crawler.config import CrawlConfig
from crawler.pipeline.frontier_store import BoundedFrontier
from crawler.service import run_crawl

PORT = 18_433
WINDOW = 2.0  # seconds before and after a refill


def fetches_by_outcome(registry: CollectorRegistry) -> Counter[str]:
    return Counter(
        {
            sample.labels["outcome"]: sample.value
            for metric in registry.collect()
            if metric.name == "crawler_fetches"
            for sample in metric.samples
            if sample.name == "crawler_fetches_total"
        }
    )


def timed_refills(
    started: list[float],
    refills: list[tuple[float, float, int, float]],
    registry: CollectorRegistry,
) -> None:
    """Time each refill of the crawl's frontier: (began, pages then, loaded, seconds)."""
    refill = BoundedFrontier.refill

    async def timed(self: BoundedFrontier, db) -> int:  # type: ignore[no-untyped-def]
        began = time.perf_counter()
        pages = fetches_by_outcome(registry)["ok"]
        loaded = await refill(self, db)
        refills.append((began - started[0], pages, loaded, time.perf_counter() - began))
        return loaded

    BoundedFrontier.refill = timed  # type: ignore[method-assign]


def sample(
    registry: CollectorRegistry,
    started: list[float],
    samples: list[tuple[float, Counter[str]]],
    stop: threading.Event,
) -> None:
    while not stop.wait(0.5):
        samples.append((time.perf_counter() - started[0], fetches_by_outcome(registry)))


def shares(counts: Counter[str]) -> str:
    total = sum(counts.values()) or 1
    return ", ".join(f"{k} {v / total:.0%}" for k, v in counts.most_common() if v)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pages", type=int, default=100_000, help="testbed pages")
    parser.add_argument("--frontier-memory", type=int, default=10_000)
    parser.add_argument("--policy", default="best-first", help="the frontier's policy")
    args = parser.parse_args()
    registry = CollectorRegistry()
    started = [time.perf_counter()]
    refills: list[tuple[float, float, int, float]] = []
    samples: list[tuple[float, Counter[str]]] = []
    timed_refills(started, refills, registry)
    opened: list[None] = []  # one entry a DBAPI connection made, by any pool
    event.listen(Pool, "connect", lambda *_: opened.append(None))
    with (
        served_testbed(port=PORT, pages=args.pages, hosts=6) as (seed, hosts),
        tempfile.TemporaryDirectory() as scratch,
    ):
        config = CrawlConfig(
            seeds=(seed,),
            topic="solar energy",
            db=f"sqlite+aiosqlite:///{scratch}/crawl.db",
            concurrency=32,
            per_host_concurrency=32,
            delay=0.0,
            metrics_port=0,
            allow_private_networks=True,
            allowed_domains=tuple(hosts),
            frontier_memory=args.frontier_memory,
            policy=args.policy,
        )
        stop = threading.Event()
        sampler = threading.Thread(target=sample, args=(registry, started, samples, stop))
        started[0] = time.perf_counter()
        sampler.start()
        try:
            asyncio.run(run_crawl(config, registry=registry, handle_signals=False))
        finally:
            stop.set()
            sampler.join()
    print(f"database connections opened: {len(opened)}")
    refills = [r for r in refills if r[2] > 1]  # the start's read of the seeds is not one
    for _, pages, loaded, seconds in refills:
        print(f"refill at {pages:.0f} pages: {loaded} URLs loaded in {seconds:.2f} s")
    if not refills:
        print("no refill: the frontier's memory held every URL")
        return
    first = refills[0][0]
    # (when, seconds, fetches by outcome) of each half second after the first refill
    steps = [(t1, t1 - t0, b - a) for (t0, a), (t1, b) in pairwise(samples) if t1 > first]
    rates = [step["ok"] / seconds for _, seconds, step in steps]
    print(f"median pages a second after the first refill: {statistics.median(rates):.0f}")
    counts = {
        "before refills": Counter[str](),
        "after refills": Counter[str](),
        "after the first refill": Counter[str](),
    }
    seconds_in = Counter[str]()
    for t, seconds, step in steps:
        if any(began - WINDOW <= t <= began for began, *_ in refills):
            near = "before refills"
        elif any(began < t <= began + WINDOW for began, *_ in refills):
            near = "after refills"
        else:
            near = None
        for name in ("after the first refill", near):
            if name is not None:
                counts[name] += step
                seconds_in[name] += seconds
    for name, outcomes in counts.items():
        if not seconds_in[name]:  # refills closer together than the window
            print(f"{name}: none")
            continue
        rate = outcomes["ok"] / seconds_in[name]
        print(f"{name}: {rate:.0f} pages a second; fetches {shares(outcomes)}")


if __name__ == "__main__":
    main()
