"""Run one crawler in this process and print what it cost, as one JSON line.

python bench/measure.py KIND SEED MAX_PAGES CONCURRENCY DB HOSTS...

KIND: crawler (its defaults: a worker process per core), crawler-warc (and WARC files),
crawler-one-processor (pages analysed on the event loop), crawler-qlearning (the
Q-learning frontier, not best-first), minimal or scrapy.

SEED is a URL, or a file of seed URLs, one a line (a real web's seeds.txt).
MAX_PAGES 0 crawls to the end of the web; otherwise each crawler stops at its own count
(URLs visited for this crawler, requests for the minimal loop, responses for Scrapy).

Pages, for every crawler: distinct HTML pages answered with 200 (a redirect counts as
the page it leads to; errors, refusals and robots.txt do not count); for this crawler,
read from its collection at the end. Besides the totals, a sampler thread records
(seconds, pages, resident MB, URLs known) every second, so that the rate and memory can
be followed as the frontier and collection grow (this crawler's pages there are its `ok`
fetches). Scrapy does not tell how many URLs it knows: None.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import resource
import sqlite3
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

SAMPLE_EVERY = 1.0


def resident_mb() -> float:
    """This process's resident memory and that of its children (worker processes)."""
    pids = [str(os.getpid())]
    for task in Path("/proc/self/task").iterdir():
        with contextlib.suppress(OSError):
            pids += (task / "children").read_text().split()
    total = 0
    for pid in pids:
        with contextlib.suppress(OSError), open(f"/proc/{pid}/statm") as statm:
            total += int(statm.read().split()[1])
    return total * resource.getpagesize() / 2**20


def sample(
    pages: Callable[[], float],
    known: Callable[[], float | None],
    samples: list[list[float | None]],
    stop: threading.Event,
) -> None:
    started = time.perf_counter()
    while not stop.wait(SAMPLE_EVERY):
        elapsed = round(time.perf_counter() - started, 2)
        samples.append([elapsed, pages(), round(resident_mb(), 1), known()])


def html_pages(db: str) -> int:
    """Distinct HTML pages a crawl stored with status 200, from its SQLite database."""
    path = db.split(":///", 1)[1]
    with sqlite3.connect(path) as connection:
        return connection.execute(
            "SELECT count(DISTINCT coalesce(final_url, url)) FROM urls "
            "WHERE status = 200 AND error IS NULL AND content_type LIKE '%html%'"
        ).fetchone()[0]


def warc_directory(db: str) -> Path:
    """WARC files beside the run's SQLite database."""
    return Path(db.removeprefix("sqlite+aiosqlite:///")).parent / "warc"


def main() -> None:
    kind, seed, max_pages, concurrency, db, *hosts = sys.argv[1:]
    seeds = [seed] if "://" in seed else Path(seed).read_text().split()
    limit = int(max_pages)
    limits = {"max_pages": limit, "concurrency": int(concurrency), "allowed": set(hosts)}
    # imports first, and only the kind's own: start-up is not what is measured
    run: Callable[[], int]
    if kind == "scrapy":  # an optional extra: `pip install -e ".[bench]"`
        import scrapy_spider

        def pages_so_far() -> float:
            return len(scrapy_spider.FollowEverything.pages)

        def known() -> float | None:
            return None

        def run() -> int:
            return scrapy_spider.crawl(seeds, **limits)

    elif kind == "minimal":
        import minimal_loop

        def pages_so_far() -> float:
            return len(minimal_loop.pages)

        def known() -> float | None:
            return len(minimal_loop.known)

        def run() -> int:
            return asyncio.run(minimal_loop.crawl(seeds, **limits))

    elif kind in ("crawler", "crawler-warc", "crawler-one-processor", "crawler-qlearning"):
        from prometheus_client import CollectorRegistry

        from crawler.config import CrawlConfig
        from crawler.service import run_crawl

        registry = CollectorRegistry()
        config = CrawlConfig(
            seeds=tuple(seeds),
            topic="solar energy",
            db=db,
            max_pages=limit or None,
            concurrency=int(concurrency),
            per_host_concurrency=int(concurrency),
            delay=0.0,
            metrics_port=0,
            allow_private_networks=True,
            allowed_domains=tuple(hosts),
            warc=str(warc_directory(db)) if kind == "crawler-warc" else None,
            processors=1 if kind == "crawler-one-processor" else None,
            **({"policy": "qlearning"} if kind == "crawler-qlearning" else {}),
        )

        def value(name: str) -> float:
            return registry.get_sample_value(name) or 0.0

        def pages_so_far() -> float:
            return registry.get_sample_value("crawler_fetches_total", {"outcome": "ok"}) or 0.0

        def known() -> float | None:
            return value("crawler_pages_stored_total") + value("crawler_frontier_size")

        def run() -> int:
            asyncio.run(run_crawl(config, registry=registry, handle_signals=False))
            return html_pages(db)

    else:
        sys.exit(f"unknown kind {kind!r}: crawler, minimal or scrapy")

    samples: list[list[float | None]] = []
    stop = threading.Event()
    sampler = threading.Thread(
        target=sample, args=(pages_so_far, known, samples, stop), daemon=True
    )
    started, cpu_started = time.perf_counter(), time.process_time()
    sampler.start()
    pages = run()
    seconds = time.perf_counter() - started
    stop.set()
    sampler.join()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(
        json.dumps(
            {
                "kind": kind,
                "pages": pages,
                "seconds": seconds,
                "cpu_seconds": time.process_time()
                - cpu_started
                + children.ru_utime
                + children.ru_stime,
                # peak resident memory: the process's own, or with its workers' (sampled)
                "peak_rss_mb": max(
                    [usage.ru_maxrss / 1024, *(s[2] for s in samples if s[2] is not None)]
                ),
                "warc_mb": sum(f.stat().st_size for f in warc_directory(db).glob("*")) / 2**20,
                "samples": samples,
            }
        )
    )


if __name__ == "__main__":
    main()
