"""`crawler plan` and `simulate`: the papers' models, outside a crawl."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from crawler.errors import ConfigError


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
    sources.add_argument("--periods", type=int, required=True, help="periods to simulate")
    sources.add_argument(
        "--policy",
        required=True,
        choices=("whittle", "greedy", "round-robin", "best", "lspe"),
        help="which sources to crawl each period",
    )
    sources.add_argument("--stochastic", action="store_true", help="eq. (19): random arrivals")
    sources.add_argument(
        "--observe",
        choices=("crawled", "all"),
        default="crawled",
        help="what the policy sees in the stochastic model",
    )
    sources.add_argument("--seed", type=int, help="random seed (with --stochastic)")
    sources.add_argument(
        "--start",
        choices=("zero", "u"),
        default="zero",
        help="each source's state at the start: 0, or its u (default zero)",
    )
    sources.add_argument("--json", action="store_true", help="one JSON object")

    sources.set_defaults(handler=_simulate)


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
    from policies.revisit.ephemeral import Source

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
    from policies.revisit.ephemeral import simulate

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
