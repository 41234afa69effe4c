"""`crawler run`, `crawler demo` and `crawler healthcheck`: crawling, and a crawl's health."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from crawler.config import ConfigError, CrawlConfig, build_config, read_toml
from crawler.config.reference import add_setting_flags, flag_names
from crawler.counts import WIDTH, Counts
from crawler.reporting.units import duration
from crawler.telemetry.healthcheck import add_arguments as add_health_arguments

if TYPE_CHECKING:
    from crawler.summary import CrawlSummary


# run's flags, by setting name; each is passed on only when given
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
        "--language",
        action="append",
        dest="languages",
        metavar="CODE",
        help="follow the links of pages in this language only, ISO 639-1 (repeatable)",
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
        "--dns-server",
        action="append",
        dest="dns_servers",
        metavar="HOST[:PORT]",
        help="ask this DNS server instead of the system's (repeatable)",
    )
    run.add_argument(
        "--no-store-text",
        action="store_const",
        const=False,
        dest="store_text",
        help="keep titles and scores, not page text",
    )
    run.add_argument(
        "--no-sitemaps",
        action="store_const",
        const=False,
        dest="sitemaps",
        help="do not read the hosts' sitemaps",
    )
    add_setting_flags(run)
    run.set_defaults(handler=_run)
    health = commands.add_parser(
        "healthcheck", help="ask a running crawler's /healthz on the port its settings name"
    )
    add_health_arguments(health)

    health.set_defaults(handler=_healthcheck)
    demo = commands.add_parser("demo", help="crawl a local testbed for a few seconds")
    demo.add_argument("--duration", type=float, default=20.0, help="seconds to crawl (default 20)")
    demo.add_argument(
        "--db", help="the crawl's database (default crawler-demo.db, here); replaced at each demo"
    )
    demo.set_defaults(handler=_demo)


def _read_topic_file(path: Path) -> str:
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise ConfigError(f"setting 'topic': cannot read {str(path)!r}: {error.strerror}") from None
    if path.suffix.lower() in (".html", ".htm"):
        from selectolax.lexbor import LexborHTMLParser

        from crawler.process.parse import decode

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
    flags: dict[str, Any] = {name: getattr(args, name) for name in flag_names()}
    for name in (
        "allowed_domains",
        "languages",
        "allowed_networks",
        "dns_servers",
        "allow_private_networks",
        "store_text",
        "sitemaps",
    ):
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
    import logging

    from crawler.service import run_crawl
    from crawler.telemetry.logs import log_to

    config = config_from_args(args)
    log_to(args.console, level=logging.getLogger().level, log_format=config.log_format)
    try:
        summary = asyncio.run(run_crawl(config, progress=args.console))
    finally:
        args.console.end_progress()
    print(format_summary(summary))
    return 0


def format_summary(summary: CrawlSummary) -> str:
    """What a run did, as `crawler run` prints it at its end."""
    counts = Counts.of(summary.outcomes, relevant=summary.relevant)
    rate = summary.fetched / max(summary.seconds, 1e-9)
    lines = [
        f"stopped: {summary.why_stopped}",  # a form scripts read
        f"{'ran for':<{WIDTH}}{duration(summary.seconds)}",
        *counts.total_lines(),
        f"{'visits a second':<{WIDTH}}{rate:.1f}",
        f"{'frontier left':<{WIDTH}}{summary.frontier}",
        *counts.error_lines(),
    ]
    return "\n".join(lines)


def _healthcheck(args: argparse.Namespace) -> int:
    from crawler.telemetry.healthcheck import check_crawler

    return check_crawler(args.config, timeout=args.timeout)


def _demo(args: argparse.Namespace) -> int:
    from testbed.demo import run_demo

    return asyncio.run(run_demo(duration=args.duration, db=args.db, console=args.console))
