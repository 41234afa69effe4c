"""The `crawler` command. Each command group lives in a module of its own: crawling
(`run`, `demo`, `healthcheck`), a running daemon (`seeds add`, `pause`, `resume`), the
collection (`export`, `status`), the report, the synthetic web (`testbed`) and research
(`plan`, `simulate`, `experiment`).

The groups load when the parser is built, not when this module is: importing the
module costs what its imports cost, not those of every command."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from typing import Any

from crawler import __version__
from crawler.errors import SettingsError, WarcError

__all__ = ["build_parser", "config_from_args", "main"]

log = logging.getLogger(__name__)

DESCRIPTION = """\
Crawl the web towards a topic: give seed URLs and a topic, and the crawler fetches
politely, scores every page against the topic and keeps what it finds in a database
you can watch, search and export.

  crawler demo                                    try it on a synthetic web, here
  crawler run --seed URL --topic TEXT             crawl (crawl.db in this directory)
  crawler status | export | report                what a crawl found
  crawler seeds add URL | pause | resume          steer a running daemon (--api)

`crawler COMMAND --help` says more of each command."""


def __getattr__(name: str) -> Any:
    if name == "config_from_args":
        from crawler.cli.crawl import config_from_args

        return config_from_args
    raise AttributeError(f"module 'crawler.cli' has no attribute {name!r}")


def build_parser() -> argparse.ArgumentParser:
    from crawler.cli import (
        collection,
        crawl,
        experiment,
        remote,
        report,
        research,
        search,
        testbed,
    )

    parser = argparse.ArgumentParser(
        prog="crawler", description=DESCRIPTION, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"crawler {__version__}")
    parser.add_argument(
        "-v", "--verbose", action="count", default=0, help="log more: each fetch and decision"
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="log warnings and errors only")
    commands = parser.add_subparsers(dest="command", required=True)
    for group in (crawl, remote, collection, search, report, research, experiment, testbed):
        group.add_commands(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from crawler.telemetry.console import Console
    from crawler.telemetry.logs import log_to, stop_logging
    from storage import StorageError

    parser = build_parser()
    args = parser.parse_args(argv)
    level = logging.WARNING if args.quiet else logging.INFO - 10 * min(args.verbose, 1)
    root_level = logging.getLogger().level
    args.console = Console(sys.stderr)  # logs and the progress line, drawn by one writer
    log_to(args.console, level=level)
    try:
        _warn_of_a_password(getattr(args, "db", None))
        return int(args.handler(args))
    except SettingsError as error:  # the input is wrong: nothing ran
        parser.exit(2, f"crawler: error: {error}\n")
    except (StorageError, WarcError, OSError) as error:  # the disk, the database, a file
        parser.exit(1, f"crawler: error: {error}\n")
    finally:  # run in-process, the command leaves the caller's logging as it was
        stop_logging()
        logging.getLogger().setLevel(root_level)
    return 0


def _warn_of_a_password(url: str | None) -> None:
    """A password given in a flag is in /proc/PID/cmdline, which every local user reads."""
    from storage import database_url

    try:
        password = database_url(url).password if url else None
    except ValueError:  # the command says what is wrong with the URL
        return
    if password:
        log.warning(
            "the database URL on the command line carries a password, which any local user "
            "can read while the command runs; give it in PGPASSWORD, a password file "
            "(~/.pgpass) or the settings file (--config) instead"
        )


if __name__ == "__main__":
    sys.exit(main())
