"""`crawler plan`, `simulate` and `experiment`: the papers' models, outside a crawl."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from crawler.errors import ConfigError
from policies.registry import names
from policies.traversals import STATES


def add_commands(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    plan = commands.add_parser("plan", help="plan capacity with the queueing models")
    plans = plan.add_subparsers(dest="plan", required=True)
    fetchers = plans.add_parser(
        "fetchers", help="the number of fetchers that minimises idle processing plus losses"
    )
    fetchers.add_argument(
        "--arrival-rate",
        type=float,
        required=True,
        help="pages per second one fetcher brings (lambda)",
    )
    fetchers.add_argument(
        "--service-rate",
        type=float,
        required=True,
        help="pages per second the processor handles (mu)",
    )
    fetchers.add_argument(
        "--buffer",
        type=int,
        required=True,
        help="pages the processor's queue holds, the one in service included (K)",
    )
    fetchers.add_argument(
        "--gamma",
        type=float,
        required=True,
        help="the cost of the processor idling, against one lost page a second",
    )
    fetchers.add_argument(
        "--dynamic",
        action="store_true",
        help="also solve the dynamic policy (activate a fetcher or not at each event)",
    )
    fetchers.add_argument(
        "--max-fetchers",
        type=int,
        help="fetchers available to the dynamic policy (default: the static optimum)",
    )
    fetchers.add_argument("--json", action="store_true", help="one JSON object")

    fetchers.set_defaults(handler=_plan)
    simulate = commands.add_parser("simulate", help="simulate the re-visit models")
    simulations = simulate.add_subparsers(dest="simulation", required=True)
    sources = simulations.add_parser(
        "sources", help="re-visit sources of ephemeral content under a policy"
    )
    sources.add_argument(
        "--sources",
        type=Path,
        required=True,
        help="CSV with a header xi,mu,Lambda (and optionally C), a source a line",
    )
    sources.add_argument("--budget", type=float, required=True, help="crawl cost a period (M)")
    sources.add_argument("--periods", type=int, required=True)
    sources.add_argument(
        "--policy", required=True, choices=("whittle", "greedy", "round-robin", "best", "lspe")
    )
    sources.add_argument("--stochastic", action="store_true", help="eq. (19): random arrivals")
    sources.add_argument(
        "--observe",
        choices=("crawled", "all"),
        default="crawled",
        help="what the policy sees in the stochastic model",
    )
    sources.add_argument("--seed", type=int)
    sources.add_argument("--start", choices=("zero", "u"), default="zero")
    sources.add_argument("--json", action="store_true", help="one JSON object")

    sources.set_defaults(handler=_simulate)
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
    live.add_argument("--plot", type=Path, help="draw the harvest and recall curves here (PNG)")
    live.add_argument("--json", action="store_true", help="one JSON object")
    live.set_defaults(handler=_live)


def _plan(args: argparse.Namespace) -> int:
    from policies import PoolModel, optimal_fetchers, relative_value_iteration

    try:
        pool = optimal_fetchers(
            arrival_rate=args.arrival_rate,
            service_rate=args.service_rate,
            buffer=args.buffer,
            gamma=args.gamma,
        )
        report: dict[str, float | int] = {
            "static_fetchers": pool.fetchers,
            "static_cost": pool.cost,
        }
        if args.dynamic:
            model = PoolModel(
                arrival_rate=args.arrival_rate,
                service_rate=args.service_rate,
                buffer=args.buffer,
                gamma=args.gamma,
                fetchers=pool.fetchers if args.max_fetchers is None else args.max_fetchers,
            )
            policy = relative_value_iteration(model)
            report.update(
                dynamic_cost=policy.average_cost,
                min_active=policy.min_active,
                mean_active=policy.mean_active,
                iterations=policy.iterations,
            )
    except ValueError as error:
        raise ConfigError(str(error)) from None
    if args.json:
        print(json.dumps(report))
        return 0
    print(
        f"static: {pool.fetchers} fetchers, cost {pool.cost:.5f} "
        f"(traffic {pool.traffic:.3f}; the optimum {pool.optimal_traffic:.3f})"
    )
    if args.dynamic:
        print(
            f"dynamic, at most {model.fetchers} fetchers: cost {report['dynamic_cost']:.5f}, "
            f"{report['min_active']} to {model.fetchers} active, "
            f"{report['mean_active']:.1f} on average ({report['iterations']} iterations)"
        )
    return 0


def read_sources(path: Path) -> list[Any]:
    """Sources from a CSV file with a header xi,mu,Lambda and optionally C."""
    from policies.ephemeral import Source

    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise ConfigError(f"cannot read sources file {str(path)!r}: {error.strerror}") from None
    rows = [line for line in lines if line.strip() and not line.lstrip().startswith("#")]
    header = [name.strip() for name in rows[0].split(",")] if rows else []
    if header not in (["xi", "mu", "Lambda"], ["xi", "mu", "Lambda", "C"]):
        raise ConfigError(
            f"sources file {str(path)!r} must start with the header xi,mu,Lambda "
            f"(optionally ,C), not {','.join(header) or 'nothing'!r}"
        )
    found = []
    for number, row in enumerate(rows[1:], start=2):
        cells = [cell.strip() for cell in row.split(",")]
        if len(cells) != len(header):
            raise ConfigError(
                f"{path}: line {number} has {len(cells)} values, the header names {len(header)}"
            )
        try:
            values = [float(cell) for cell in cells]
            found.append(
                Source(
                    xi=values[0],
                    mu=values[1],
                    arrival_rate=values[2],
                    cost=values[3] if len(values) == 4 else 1.0,
                )
            )
        except ValueError as error:
            raise ConfigError(f"{path}: line {number}: {error}") from None
    if not found:
        raise ConfigError(f"sources file {str(path)!r} lists no sources")
    return found


def _simulate(args: argparse.Namespace) -> int:
    from policies.ephemeral import simulate

    sources = read_sources(args.sources)
    try:
        result = simulate(
            sources,
            budget=args.budget,
            periods=args.periods,
            policy=args.policy,
            stochastic=args.stochastic,
            observe=args.observe,
            seed=args.seed,
            start=args.start,
        )
    except ValueError as error:
        raise ConfigError(str(error)) from None
    if args.json:
        print(
            json.dumps(
                {
                    "average_reward": result.average_reward,
                    "crawls_per_source": result.crawls_per_source,
                }
            )
        )
    else:
        print(f"average reward a period: {result.average_reward:.2f} over {args.periods}")
        print("crawls per source: " + " ".join(str(c) for c in result.crawls_per_source))
    return 0


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

    from crawler.experiments import CrawlSettings, LiveResults, TruthWeb, live_experiment

    for name in ("budget", "repeat", "concurrency", "per_host_concurrency"):
        if getattr(args, name) < 1:
            raise ConfigError(f"--{name.replace('_', '-')} must be at least 1")
    settings = CrawlSettings(args.budget, args.concurrency, args.per_host_concurrency)

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
        print(json.dumps({**summary, "runs": results.runs, "medians": medians}))
        return 0
    keys = list(next(iter(medians.values())))
    print(
        f"\n{title}: {results.web.relevant} relevant pages, {args.budget} pages a crawl, "
        f"medians of {args.repeat}"
    )
    print(f"{'policy':<12}" + "".join(f"{key:>14}" for key in keys))
    for policy, values in medians.items():
        print(f"{policy:<12}" + "".join(f"{values[key]:>14.3f}" for key in keys))
    if args.plot is not None:
        print(f"plotted {args.plot}")
    return 0
