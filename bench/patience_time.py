"""What a frontier's patience costs in time: polite crawls of a ground-truth web for a
fixed duration, with each patience given, and the pages and relevant pages each found.

    python bench/patience_time.py --ground-truth /tmp/realweb/truth/git \
        [--seconds 60] [--delay 0.25] [--policy qlearning] [--patience default 0]

With politeness on, a patient frontier leaves slots idle while the best host's turn
comes (docs/focus.md): it makes fewer requests in the same time, and the question is how
many relevant pages it finds in that time against a frontier that fills every slot.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from pathlib import Path

from prometheus_client import CollectorRegistry

from crawler.config import CrawlConfig
from crawler.experiments import TruthWeb, check_served
from crawler.reporting.history import read_history
from crawler.service import run_crawl


async def crawl_for(
    web: TruthWeb, args: argparse.Namespace, patience: float | None, scratch: Path
) -> dict[str, float]:
    """One crawl of `args.seconds`: distinct pages stored, relevant ones among them,
    and the dispatcher's waits."""
    db = f"sqlite+aiosqlite:///{scratch / f'{patience}.db'}"
    config = CrawlConfig(
        seeds=web.seeds,
        topic=web.topic,
        db=db,
        delay=args.delay,
        concurrency=args.concurrency,
        per_host_concurrency=1,
        duration=args.seconds,
        policy=args.policy,
        patience=patience,
        metrics_port=0,
        allow_private_networks=True,
        allowed_domains=web.hostnames,
    )
    registry = CollectorRegistry()
    await run_crawl(config, registry=registry, handle_signals=False)
    urls = set((await read_history(db)).urls)  # a re-visit of a source counts once
    relevant = sum(web.relevance.get(url, 0.0) >= web.threshold for url in urls)
    waits = registry.get_sample_value("crawler_focus_waits_total") or 0.0
    return {"pages": len(urls), "relevant": relevant, "waits": waits}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ground-truth", type=Path, required=True)
    parser.add_argument("--truth-threshold", type=float)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--delay", type=float, default=0.25)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--policy", default="qlearning")
    parser.add_argument(
        "--patience", nargs="+", default=["default", "0"], help="'default': the policy's own"
    )
    args = parser.parse_args()
    web = TruthWeb.read(args.ground_truth, args.truth_threshold)
    await check_served(web)
    with tempfile.TemporaryDirectory(prefix="patience-time-") as scratch:
        for given in args.patience:
            patience = None if given == "default" else float(given)
            found = await crawl_for(web, args, patience, Path(scratch))
            print(
                f"{args.policy} patience {given}: {found['pages']:.0f} pages in "
                f"{args.seconds:.0f} s, {found['relevant']:.0f} relevant of {web.relevant}, "
                f"{found['waits']:.0f} waits",
                flush=True,
            )


if __name__ == "__main__":
    asyncio.run(main())
