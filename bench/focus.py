"""Focus: a web whose pages' true relevance is known, crawled once per frontier policy
from the same seeds (`bench/harness.py`), and how soon each crawl found the relevant
pages: recall and harvest within the first N fetched, the pages fetched until recall
reached 0.9, P over its upper bound (O'Meara & Patel, eq. 3), and where each policy's
pages went, host by host.

    python -m bench focus --testbed 20000 --budget 5000 --repeat 3
    python -m bench focus --ground-truth /tmp/realweb/truth/git --budget 1000 --repeat 5 \\
        --per-host-concurrency 4 --json > git.json

The real webs and their ground truths are set up as `bench/realweb/README.md` says;
`python -m bench rounds` pools the printouts of several such runs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import sys
from pathlib import Path

from bench.harness import CrawlSettings, LiveResults, TruthWeb, live_experiment, plot_curves
from crawler.config import defaults
from crawler.errors import ConfigError
from policies.registry import names

HOST_ROWS = 12  # hosts shown in the table of where the pages went


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench focus", description=__doc__.split("\n\n")[0]
    )
    web = parser.add_mutually_exclusive_group(required=True)
    web.add_argument(
        "--ground-truth",
        type=Path,
        help="a served web's ground truth: pages.tsv, seeds.txt, topic.txt (threshold.txt)",
    )
    web.add_argument(
        "--testbed", type=int, metavar="PAGES", help="serve the synthetic web of this size"
    )
    parser.add_argument("--web-seed", type=int, default=0, help="the synthetic web's seed")
    policies = names("frontier")
    parser.add_argument("--policies", nargs="+", choices=policies, default=policies)
    parser.add_argument("--budget", type=int, default=1_000, help="pages fetched by each crawl")
    parser.add_argument("--repeat", type=int, default=1, help="crawls per policy, interleaved")
    parser.add_argument(
        "--truth-threshold",
        type=float,
        help="true relevance from which a page counts (default: threshold.txt; 0.4 on the testbed)",
    )
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--per-host-concurrency", type=int, default=1)
    parser.add_argument(
        "--patience",
        type=float,
        help="every policy's patience (see `crawler run --help`); default: each policy's own",
    )
    parser.add_argument(
        "--topic-feedback",
        type=float,
        default=defaults.TOPIC_FEEDBACK,
        help="every crawl's weight of the relevant pages' words in link estimates",
    )
    parser.add_argument("--plot", type=Path, help="draw the harvest and recall curves here (PNG)")
    parser.add_argument("--json", action="store_true", help="one JSON object")
    args = parser.parse_args(argv)
    for name in ("budget", "repeat", "concurrency", "per_host_concurrency"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.patience is not None and not 0.0 <= args.patience <= 1.0:
        parser.error("--patience must be between 0 and 1")
    if not (math.isfinite(args.topic_feedback) and args.topic_feedback >= 0):
        parser.error("--topic-feedback must be a finite number, 0 or more")
    return args


async def experiment(args: argparse.Namespace) -> tuple[LiveResults, str]:
    settings = CrawlSettings(
        args.budget,
        args.concurrency,
        args.per_host_concurrency,
        patience=args.patience,
        topic_feedback=args.topic_feedback,
    )

    def report(policy: str, run: int, measured: dict[str, float]) -> None:
        if not args.json:
            figures = "  ".join(f"{key} {value:.3f}" for key, value in measured.items())
            print(f"run {run + 1} {policy}: {figures}", flush=True)

    if args.ground_truth is not None:
        web = TruthWeb.read(args.ground_truth, args.truth_threshold)
        results = await live_experiment(
            web, args.policies, repeat=args.repeat, settings=settings, on_run=report
        )
        return results, f"{args.ground_truth}: {web.topic!r}"
    from testbed.server import Testbed
    from testbed.web import WebSpec

    async with Testbed(WebSpec(pages=args.testbed, seed=args.web_seed)) as bed:
        relevance = {bed.page_url(p): float(bed.web.relevance[p]) for p in range(args.testbed)}
        threshold = 0.4 if args.truth_threshold is None else args.truth_threshold
        web = TruthWeb(tuple(bed.seeds), bed.topic, relevance, threshold)
        results = await live_experiment(
            web, args.policies, repeat=args.repeat, settings=settings, on_run=report
        )
    return results, f"testbed of {args.testbed:,} pages, seed {args.web_seed}"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        results, title = asyncio.run(experiment(args))
    except ConfigError as error:  # a ground truth that cannot be read, a web not served
        print(f"python -m bench focus: error: {error}", file=sys.stderr)
        return 2
    medians = results.medians()
    if args.plot is not None:
        plot_curves(results, args.plot, f"{title}, median and range of {args.repeat} runs")
    if args.json:
        web = results.web
        summary = {"topic": web.topic, "relevant": web.relevant, "threshold": web.threshold}
        hosts = {"relevant_by_host": web.relevant_by_host(), "hosts": results.hosts()}
        print(json.dumps({**summary, "runs": results.runs, "medians": medians, **hosts}))
        return 0
    keys = list(next(iter(medians.values())))
    print(
        f"\n{title}: {results.web.relevant} relevant pages, {args.budget} pages a crawl, "
        f"medians of {args.repeat}"
    )
    print(f"{'policy':<12}" + "".join(f"{key:>14}" for key in keys))
    for policy, values in medians.items():
        print(f"{policy:<12}" + "".join(f"{values[key]:>14.3f}" for key in keys))
    print_hosts(results)
    if args.plot is not None:
        print(f"plotted {args.plot}")
    return 0


def print_hosts(results: LiveResults) -> None:
    """Where each policy's pages went: by host, the medians over runs of the pages a
    crawl spent there and of the relevant pages it found there; the hosts holding most
    relevant pages first, then those most fetched."""
    relevant = results.web.relevant_by_host()
    spent = results.host_medians()
    policies = list(spent)
    hosts = sorted(
        next(iter(spent.values()), {}),
        key=lambda host: (-relevant.get(host, 0), -max(spent[p][host][0] for p in policies)),
    )
    print("\nwhere the pages went (medians): pages fetched / relevant found, by host")
    print(f"{'host':<24}{'relevant':>9}" + "".join(f"{policy:>14}" for policy in policies))
    for host in hosts[:HOST_ROWS]:
        cells = "".join(f"{f'{spent[p][host][0]:g} / {spent[p][host][1]:g}':>14}" for p in policies)
        print(f"{host:<24}{relevant.get(host, 0):>9}{cells}")
    if len(hosts) > HOST_ROWS:
        print(f"and {len(hosts) - HOST_ROWS} more hosts")


if __name__ == "__main__":
    raise SystemExit(main())
