"""`crawler experiment traversals`: crawls replayed over a graph whose truth is known,
as O'Meara & Patel's Figure 3 repeats them. Live crawls of such a web, once per frontier
policy, are a benchmark: `python -m bench focus`."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from crawler.errors import ConfigError
from policies.offline.traversals import STATES
from policies.registry import names


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
    traversals.add_argument(
        "--traversals", type=int, required=True, help="times the policy crawls the graph"
    )
    traversals.add_argument(
        "--policy", required=True, choices=names("traversal"), help="the traversal policy"
    )
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
    traversals.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    traversals.add_argument("--json", action="store_true", help="one JSON object")

    traversals.set_defaults(handler=_experiment)


def _experiment(args: argparse.Namespace) -> int:
    from crawler.reporting.ground_truth import read_graph
    from policies.frontier.qlearning.table import LearningSettings
    from policies.offline.traversals import run_traversals
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
