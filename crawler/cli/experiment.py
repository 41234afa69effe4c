"""`crawler experiment`: crawls of a web whose truth is known, replayed over its graph
(`traversals`) or made live, once per frontier policy (`live`)."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import TYPE_CHECKING

from crawler.config import defaults
from crawler.errors import ConfigError
from policies.registry import names
from policies.traversals import STATES

if TYPE_CHECKING:
    from crawler.experiments import LiveResults


def add_commands(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    experiment = commands.add_parser("experiment", help="replay crawls over a known graph")
    experiments = experiment.add_subparsers(dest="experiment", required=True)
    traversals = experiments.add_parser(
        "traversals",
        help="P / upper bound of repeated traversals of one graph (O'Meara & Patel, Fig. 3)",
    )
    traversals.add_argument(
        "--graph",
        required=True,
        help="'testbed' (the testbed's web) or a directory with pages.tsv, links.tsv, seeds.txt",
    )
    traversals.add_argument("--pages", type=int, default=5_000, help="the testbed's size")
    traversals.add_argument("--web-seed", type=int, default=0, help="the testbed's seed")
    traversals.add_argument("--traversals", type=int, required=True)
    traversals.add_argument("--policy", required=True, choices=names("traversal"))
    traversals.add_argument(
        "--state",
        choices=STATES,
        default="discoverer",
        help="qlearning's state: the discovering page (the paper's) or the link's features",
    )
    traversals.add_argument("--gamma", type=float, default=0.5, help="discount")
    traversals.add_argument("--step", type=float, default=0.5, help="initial step size")
    traversals.add_argument("--epsilon", type=float, default=0.1, help="initial exploration")
    traversals.add_argument(
        "--epsilon-decay", type=float, default=0.9, help="exploration's factor a traversal"
    )
    traversals.add_argument("--seed", type=int, default=0)
    traversals.add_argument("--json", action="store_true", help="one JSON object")

    traversals.set_defaults(handler=_experiment)

    live = experiments.add_parser(
        "live",
        help="crawl a web with ground truth once per frontier policy: harvest and recall",
    )
    web = live.add_mutually_exclusive_group(required=True)
    web.add_argument(
        "--ground-truth",
        type=Path,
        help="a served web's ground truth: pages.tsv, seeds.txt, topic.txt (threshold.txt)",
    )
    web.add_argument(
        "--testbed", type=int, metavar="PAGES", help="serve the synthetic web of this size"
    )
    live.add_argument("--web-seed", type=int, default=0, help="the synthetic web's seed")
    policies = names("frontier")
    live.add_argument("--policies", nargs="+", choices=policies, default=policies)
    live.add_argument("--budget", type=int, default=1_000, help="pages fetched by each crawl")
    live.add_argument("--repeat", type=int, default=1, help="crawls per policy, interleaved")
    live.add_argument(
        "--truth-threshold",
        type=float,
        help="true relevance from which a page counts (default: threshold.txt; 0.4 on the testbed)",
    )
    live.add_argument("--concurrency", type=int, default=8)
    live.add_argument("--per-host-concurrency", type=int, default=1)
    live.add_argument(
        "--patience",
        type=float,
        help="every policy's patience (see `crawler run --help`); default: each policy's own",
    )
    live.add_argument(
        "--topic-feedback",
        type=float,
        default=defaults.TOPIC_FEEDBACK,
        help="every crawl's weight of the relevant pages' words in link estimates "
        "(see `crawler run --help`)",
    )
    live.add_argument("--plot", type=Path, help="draw the harvest and recall curves here (PNG)")
    live.add_argument("--json", action="store_true", help="one JSON object")
    live.set_defaults(handler=_live)


def _experiment(args: argparse.Namespace) -> int:
    from crawler.reporting.ground_truth import read_graph
    from policies.qlearning import LearningSettings
    from policies.traversals import run_traversals
    from testbed.graph import web_graph
    from testbed.web import WebSpec

    try:
        settings = LearningSettings(
            gamma=args.gamma,
            step=args.step,
            epsilon=args.epsilon,
            epsilon_decay=args.epsilon_decay,
        )
        if args.graph == "testbed":
            graph = web_graph(WebSpec(pages=args.pages, seed=args.web_seed))
        else:
            graph = read_graph(Path(args.graph))
        if not args.json:
            print(f"graph: {graph.pages} pages, {graph.links} links, {len(graph.seeds)} seeds")
        report = run_traversals(
            graph,
            args.policy,
            args.traversals,
            settings=settings,
            state=args.state,
            seed=args.seed,
            on_traversal=None
            if args.json
            else lambda number, ratio: print(f"traversal {number + 1}: P / upper {ratio:.4f}"),
        )
    except ValueError as error:  # a ground-truth file's error included
        raise ConfigError(str(error)) from None
    if args.json:
        print(
            json.dumps(
                {
                    "policy": report.policy,
                    "state": args.state if args.policy == "qlearning" else None,
                    "p_over_upper": report.p_over_upper,
                    "reachable_pages": report.reachable_pages,
                    "links": report.links,
                    "upper_bound": report.upper_bound,
                }
            )
        )
    return 0


def _live(args: argparse.Namespace) -> int:
    import asyncio

    from crawler.experiments import CrawlSettings, TruthWeb, live_experiment

    for name in ("budget", "repeat", "concurrency", "per_host_concurrency"):
        if getattr(args, name) < 1:
            raise ConfigError(f"--{name.replace('_', '-')} must be at least 1")
    if args.patience is not None and not 0.0 <= args.patience <= 1.0:
        raise ConfigError("--patience must be between 0 and 1")
    if not (math.isfinite(args.topic_feedback) and args.topic_feedback >= 0):
        raise ConfigError("--topic-feedback must be a finite number, 0 or more")
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

    async def experiment() -> tuple[LiveResults, str]:
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

    results, title = asyncio.run(experiment())
    medians = results.medians()
    if args.plot is not None:
        from crawler.experiments import plot_curves

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
    _print_hosts(results)
    if args.plot is not None:
        print(f"plotted {args.plot}")
    return 0


HOST_ROWS = 12  # hosts shown in the table of where the pages went


def _print_hosts(results: LiveResults) -> None:
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
