"""Run one crawler in this process and print what it cost, as one JSON line.

python bench/measure.py crawler|minimal SEED MAX_PAGES CONCURRENCY DB HOSTS...
"""

from __future__ import annotations

import asyncio
import json
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def main() -> None:
    kind, seed, max_pages, concurrency, db, *hosts = sys.argv[1:]
    # imports first: start-up is not what is measured
    from minimal_loop import crawl
    from prometheus_client import CollectorRegistry

    from crawler.config import CrawlConfig
    from crawler.service import run_crawl

    started, cpu_started = time.perf_counter(), time.process_time()
    if kind == "minimal":
        pages = asyncio.run(
            crawl(
                [seed], max_pages=int(max_pages), concurrency=int(concurrency), allowed=set(hosts)
            )
        )
    else:
        config = CrawlConfig(
            seeds=(seed,),
            topic="solar energy",
            db=db,
            max_pages=int(max_pages),
            concurrency=int(concurrency),
            per_host_concurrency=int(concurrency),
            delay=0.0,
            metrics_port=0,
            allow_private_networks=True,
            allowed_domains=tuple(hosts),
        )
        summary = asyncio.run(run_crawl(config, registry=CollectorRegistry(), handle_signals=False))
        pages = summary.fetched
    seconds = time.perf_counter() - started
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
                # peak resident memory of the whole process, imports included
                "peak_rss_mb": max(usage.ru_maxrss, children.ru_maxrss) / 1024,
            }
        )
    )


if __name__ == "__main__":
    main()
