"""`crawler run`, `crawler demo` and `crawler healthcheck`: crawling, and a crawl's health."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from crawler.config import ConfigError, CrawlConfig, build_config, read_toml
from policies import frontier_policy_names

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
    "daemon_id": {
        "help": "this daemon's name in a crawl shared through PostgreSQL (default: the "
        "machine's name and a random suffix)",
    },
    "lease_seconds": {
        "type": float,
        "help": "seconds a daemon's lease of a host lasts unless renewed; a killed "
        "daemon's hosts go to the others after this (default 60)",
    },
}


def add_commands(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
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
    run.set_defaults(handler=_run)
    health = commands.add_parser(
        "healthcheck", help="ask a running crawler's /healthz on the port its settings name"
    )
    health.add_argument("--config", type=Path, help="the crawl's TOML file of settings")
    health.add_argument("--timeout", type=float, default=4.0, help="seconds to wait (default 4)")

    health.set_defaults(handler=_healthcheck)
    demo = commands.add_parser("demo", help="crawl a local testbed for a few seconds")
    demo.add_argument("--duration", type=float, default=20.0)
    demo.add_argument("--db", help="database URL (default: a new file in a temp directory)")
    demo.set_defaults(handler=_demo)


def _read_topic_file(path: Path) -> str:
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise ConfigError(f"setting 'topic': cannot read {str(path)!r}: {error.strerror}") from None
    if path.suffix.lower() in (".html", ".htm"):
        from selectolax.lexbor import LexborHTMLParser

        from crawler.pipeline.parse import decode

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


def _healthcheck(args: argparse.Namespace) -> int:
    from crawler.telemetry.healthcheck import check_health, health_url

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


def _demo(args: argparse.Namespace) -> int:
    from testbed.demo import run_demo

    return asyncio.run(run_demo(duration=args.duration, db=args.db))
