"""The `crawler` command: run, export, status, healthcheck, testbed, demo."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from crawler import __version__
from crawler.config import ConfigError, CrawlConfig, build_config, read_toml
from policies import frontier_policy_names
from policies.traversals import STATES, TRAVERSAL_POLICIES

log = logging.getLogger("crawler")

# run's flags, by setting name; each is passed on only when given
RUN_FLAGS: dict[str, dict[str, Any]] = {
    "db": {"help": "database URL (default sqlite+aiosqlite:///crawl.db)"},
    "max_pages": {"type": int, "help": "stop after this many URLs are visited"},
    "duration": {"type": float, "help": "stop after this many seconds"},
    "policy": {"help": "frontier order: " + ", ".join(frontier_policy_names())},
    "concurrency": {"type": int, "help": "visits in flight across all hosts"},
    "per_host_concurrency": {"type": int, "help": "requests at once to one host (default 1)"},
    "delay": {"type": float, "help": "minimum seconds between requests to a host"},
    "max_depth": {"type": int, "help": "links followed from the seeds, at most"},
    "metrics_host": {"help": "address of the /metrics and /healthz server"},
    "metrics_port": {"type": int, "help": "port of the metrics server (0 disables)"},
    "user_agent": {"help": "User-Agent sent, and matched in robots.txt"},
    "relevance_threshold": {"type": float, "help": "relevance at which a page counts"},
    "connect_timeout": {"type": float, "help": "seconds to connect"},
    "total_timeout": {"type": float, "help": "seconds for a whole request"},
    "max_body_bytes": {"type": int, "help": "largest body read"},
    "max_redirects": {"type": int, "help": "redirects followed from one URL"},
    "buffer": {"type": int, "help": "pages queued for the processor, at most (K)"},
    "frontier_memory": {
        "type": int,
        "help": "frontier URLs held in memory; the rest wait in the database (default 100000)",
    },
    "host_memory": {
        "type": int,
        "help": "hosts whose state is held in memory; idle others wait in the database "
        "(default 10000)",
    },
    "fetchers": {"help": "pool policy: fixed (concurrency), mm1k or mdp"},
    "full_queue": {
        "choices": ["block", "drop"],
        "help": "a page meeting a full processor queue waits with its fetcher (block, the "
        "default) or is dropped and fetched again later (drop: the paper's loss)",
    },
    "gamma": {
        "type": float,
        "help": "pool cost of an idle processor, in pages lost a second (default: mu (K+2)/K)",
    },
    "max_retries": {"type": int, "help": "times a 429/503 URL is tried again"},
    "max_backoff": {"type": float, "help": "longest wait, in seconds, for a failing host"},
    "robots_ttl": {"type": float, "help": "seconds a robots.txt is trusted"},
    "robots_retry": {"type": float, "help": "seconds before asking again after a 5xx robots.txt"},
    "progress_interval": {"type": float, "help": "seconds between progress log lines"},
    "revisit": {"help": "re-visit policy for sources: whittle, greedy, round-robin or off"},
    "revisit_period": {"type": float, "help": "seconds between re-visit plans (default 300)"},
    "revisit_budget": {"type": float, "help": "source re-visits a period (default 10)"},
    "interest_half_life": {
        "type": float,
        "help": "seconds for a new item's interest to halve (default 86400)",
    },
    "source_half_lives": {
        "action": "append",
        "metavar": "PREFIX=SECONDS",
        "help": "interest half-life of the sources under a URL prefix (repeatable)",
    },
    "source_min_links": {"type": int, "help": "links that make a page a source (default 20)"},
    "max_sources": {"type": int, "help": "sources tracked, at most (default 10000)"},
    "warc": {
        "metavar": "DIR",
        "help": "write every answer to WARC files in this directory (none by default)",
    },
    "warc_max_size": {
        "type": int,
        "metavar": "BYTES",
        "help": "size at which the next WARC file starts (default 1000000000)",
    },
    "warc_prefix": {"help": "WARC file names start with this (default crawl)"},
}


def _add_run_parser(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    run = commands.add_parser("run", help="crawl from seeds towards a topic")
    run.add_argument("--config", type=Path, help="TOML file of settings (flags override it)")
    run.add_argument("--seed", action="append", dest="seeds", help="a seed URL (repeatable)")
    run.add_argument("--seeds-file", type=Path, help="seed URLs, one a line")
    run.add_argument("--topic", help="the topic, as text")
    run.add_argument("--topic-file", type=Path, help="the topic, from a text or HTML file")
    run.add_argument(
        "--allowed-domain",
        action="append",
        dest="allowed_domains",
        help="a domain to stay in (repeatable; default: the seeds' hosts)",
    )
    run.add_argument(
        "--allow-private-networks",
        action="store_const",
        const=True,
        help="allow loopback, private and link-local addresses",
    )
    run.add_argument(
        "--allow-network",
        action="append",
        dest="allowed_networks",
        metavar="CIDR",
        help="allow this network (repeatable)",
    )
    run.add_argument(
        "--no-store-text",
        action="store_const",
        const=False,
        dest="store_text",
        help="keep titles and scores, not page text",
    )
    for name, options in RUN_FLAGS.items():
        run.add_argument("--" + name.replace("_", "-"), dest=name, **options)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="crawler", description=__doc__)
    parser.add_argument("--version", action="version", version=f"crawler {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more logging")
    commands = parser.add_subparsers(dest="command", required=True)
    _add_run_parser(commands)

    export = commands.add_parser("export", help="write the collection as JSON lines or CSV")
    export.add_argument("--db", required=True, help="database URL")
    export.add_argument("--format", choices=("jsonl", "csv"), default="jsonl")
    export.add_argument("--min-relevance", type=float)
    export.add_argument("--out", type=Path, help="file to write (default: standard output)")

    status = commands.add_parser("status", help="summarise a crawl")
    status.add_argument("--db", required=True, help="database URL")
    status.add_argument("--relevance-threshold", type=float)
    status.add_argument("--json", action="store_true", help="one JSON object")

    health = commands.add_parser(
        "healthcheck", help="ask a running crawler's /healthz on the port its settings name"
    )
    health.add_argument("--config", type=Path, help="the crawl's TOML file of settings")
    health.add_argument("--timeout", type=float, default=4.0, help="seconds to wait (default 4)")

    report = commands.add_parser("report", help="draw a crawl: an HTML file or PNG files")
    report.add_argument("--db", required=True, help="database URL")
    report.add_argument(
        "--out", type=Path, required=True, help="report.html, or a directory for PNG files"
    )
    report.add_argument(
        "--ground-truth",
        type=Path,
        help="pages.tsv, or the directory holding it (crawler testbed --ground-truth DIR)",
    )
    report.add_argument(
        "--truth-threshold",
        type=float,
        default=0.4,
        help="ground-truth relevance from which a page counts as relevant",
    )

    testbed = commands.add_parser("testbed", help="serve a synthetic topical web on loopback")
    testbed.add_argument("--port", type=int, default=8080)
    testbed.add_argument("--seed", type=int, default=0)
    testbed.add_argument("--pages", type=int, default=5000)
    testbed.add_argument("--hosts", type=int, default=6)
    testbed.add_argument(
        "--latency", type=float, default=0.0, help="mean seconds before each page is served"
    )
    testbed.add_argument("--crawl-delay", type=float, help="Crawl-delay in robots.txt")
    testbed.add_argument(
        "--paragraphs",
        type=int,
        default=3,
        help="paragraphs of text a page (more cost more to process)",
    )
    testbed.add_argument("--ground-truth", type=Path, help="write the graph and relevance here")
    testbed.add_argument(
        "--sources",
        type=Path,
        help="ephemeral sources to serve: CSV xi,mu,Lambda (mu and Lambda per second)",
    )

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
    traversals.add_argument("--policy", required=True, choices=TRAVERSAL_POLICIES)
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

    demo = commands.add_parser("demo", help="crawl a local testbed for a few seconds")
    demo.add_argument("--duration", type=float, default=20.0)
    demo.add_argument("--db", help="database URL (default: a new file in a temp directory)")
    return parser


def _read_topic_file(path: Path) -> str:
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise ConfigError(f"setting 'topic': cannot read {str(path)!r}: {error.strerror}") from None
    if path.suffix.lower() in (".html", ".htm"):
        from selectolax.lexbor import LexborHTMLParser

        from crawler.parse import decode

        tree = LexborHTMLParser(decode(raw, None))
        tree.strip_tags(["script", "style"])
        return tree.text(separator=" ")
    return raw.decode("utf-8", errors="replace")


def _read_seeds_file(path: Path) -> list[str]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise ConfigError(f"setting 'seeds': cannot read {str(path)!r}: {error.strerror}") from None
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def config_from_args(args: argparse.Namespace) -> CrawlConfig:
    file_values = read_toml(args.config) if args.config else {}
    flags: dict[str, Any] = {name: getattr(args, name) for name in RUN_FLAGS}
    for name in ("allowed_domains", "allowed_networks", "allow_private_networks", "store_text"):
        flags[name] = getattr(args, name)
    seeds = list(args.seeds or [])
    if args.seeds_file:
        seeds += _read_seeds_file(args.seeds_file)
    if seeds:
        flags["seeds"] = seeds
    if args.topic_file:
        flags["topic"] = _read_topic_file(args.topic_file)
    if args.topic:
        flags["topic"] = (flags.get("topic", "") + " " + args.topic).strip()
    flags = {name: value for name, value in flags.items() if value is not None}
    return build_config(file_values=file_values, flag_values=flags)


def _run(args: argparse.Namespace) -> int:
    from crawler.service import run_crawl

    config = config_from_args(args)
    summary = asyncio.run(run_crawl(config, progress=sys.stderr))
    if sys.stderr.isatty():
        sys.stderr.write("\n")
    outcomes = ", ".join(f"{k} {v}" for k, v in sorted(summary.outcomes.items())) or "none"
    print(
        f"stopped: {summary.stop_reason}\n"
        f"visited {summary.fetched} URLs in {summary.seconds:.1f} s "
        f"({summary.fetched / max(summary.seconds, 1e-9):.1f}/s), "
        f"{summary.relevant} relevant\n"
        f"outcomes: {outcomes}\n"
        f"frontier left: {summary.frontier}"
    )
    return 0


def _export(args: argparse.Namespace) -> int:
    from crawler.collection import export

    if args.out is None:
        count = asyncio.run(
            export(args.db, sys.stdout, fmt=args.format, min_relevance=args.min_relevance)
        )
    else:
        # write beside the target and rename, so a failed export leaves no half file
        partial = args.out.with_name(args.out.name + ".partial")
        with partial.open("w", encoding="utf-8", newline="") as out:
            count = asyncio.run(
                export(args.db, out, fmt=args.format, min_relevance=args.min_relevance)
            )
        partial.replace(args.out)
    print(f"exported {count} records", file=sys.stderr)
    return 0


def _status(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from crawler.collection import format_sources, format_status, status, top_sources

    async def read() -> tuple[Any, Any]:
        report = await status(args.db, relevance_threshold=args.relevance_threshold)
        return report, await top_sources(args.db)

    report, sources = asyncio.run(read())
    if args.json:
        print(json.dumps({**asdict(report), "top_sources": [asdict(s) for s in sources]}))
        return 0
    print(format_status(report))
    if sources:
        print("sources publishing the most (as measured by their re-visits)")
        print(format_sources(sources))
    return 0


def _healthcheck(args: argparse.Namespace) -> int:
    from crawler.healthcheck import check_health, health_url

    config = build_config(file_values=read_toml(args.config) if args.config else {})
    url = health_url(config)
    if url is None:
        print("metrics_port is 0: no /healthz to ask", file=sys.stderr)
        return 0
    problem = check_health(url, timeout=args.timeout)
    if problem is not None:
        print(f"crawler: unhealthy: {problem}", file=sys.stderr)
        return 1
    return 0


def _testbed(args: argparse.Namespace) -> int:
    from crawler.testbed import ServerSpec, Testbed
    from crawler.testbed_sources import EphemeralSource
    from crawler.testbed_web import WebSpec

    sources = [
        EphemeralSource(s.xi, s.mu, s.arrival_rate)
        for s in (read_sources(args.sources) if args.sources else [])
    ]

    async def serve() -> None:
        bed = Testbed(
            WebSpec(seed=args.seed, pages=args.pages, hosts=args.hosts),
            ServerSpec(
                port=args.port,
                latency=args.latency,
                crawl_delay=args.crawl_delay,
                paragraphs=args.paragraphs,
            ),
            sources=sources,
        )
        async with bed:
            print(f"testbed: {args.pages} pages on {', '.join(bed.base_urls)}")
            print(f"seed: {bed.seeds[0]}\ntopic: {bed.topic}")
            if args.ground_truth:
                bed.write_ground_truth(args.ground_truth)
                truth = args.ground_truth
                print(
                    f"crawl it: crawler run --seeds-file {truth / 'seeds.txt'} "
                    f"--topic-file {truth / 'topic.txt'} --allow-private-networks"
                )
            for i in range(len(sources)):
                print(f"source {i}: {bed.source_url(i)}")
            if sources:
                print(f"ledger of collected worth: {bed.base_urls[0]}/_ledger")
            print(end="", flush=True)
            await asyncio.Event().wait()

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve())
    return 0


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
    from crawler.ground_truth import GraphFormatError, read_graph, testbed_graph
    from crawler.testbed_web import WebSpec
    from policies.qlearning import LearningSettings
    from policies.traversals import run_traversals

    try:
        settings = LearningSettings(
            gamma=args.gamma,
            step=args.step,
            epsilon=args.epsilon,
            epsilon_decay=args.epsilon_decay,
        )
        if args.graph == "testbed":
            graph = testbed_graph(WebSpec(pages=args.pages, seed=args.web_seed))
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
    except (ValueError, GraphFormatError) as error:
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


def _demo(args: argparse.Namespace) -> int:
    from crawler.demo import run_demo

    return asyncio.run(run_demo(duration=args.duration, db=args.db))


def _report(args: argparse.Namespace) -> int:
    from crawler.ground_truth import GraphFormatError
    from crawler.history import read_ground_truth, read_history
    from crawler.report import MissingExtra, write_report

    try:
        truth = None if args.ground_truth is None else read_ground_truth(args.ground_truth)
        history = asyncio.run(read_history(args.db))
        written = write_report(history, args.out, truth=truth, truth_threshold=args.truth_threshold)
    except (GraphFormatError, MissingExtra) as error:
        print(f"crawler: error: {error}", file=sys.stderr)
        return 2
    for path in written:
        print(path)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    level = logging.WARNING - 10 * min(args.verbose + 1, 2)
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    handlers = {
        "run": _run,
        "export": _export,
        "report": _report,
        "status": _status,
        "healthcheck": _healthcheck,
        "testbed": _testbed,
        "demo": _demo,
        "plan": _plan,
        "simulate": _simulate,
        "experiment": _experiment,
    }
    try:
        return handlers[args.command](args)
    except ConfigError as error:
        parser.exit(2, f"crawler: error: {error}\n")
    except Exception as error:  # the known failures of storage and the network
        from storage import StorageError

        if isinstance(error, StorageError | OSError):
            parser.exit(1, f"crawler: error: {error}\n")
        raise
    return 0


if __name__ == "__main__":
    sys.exit(main())
