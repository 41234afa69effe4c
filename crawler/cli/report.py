"""`crawler report`: a crawl drawn as an HTML file or PNG files."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from crawler.cli.options import add_db_option


def add_commands(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    report = commands.add_parser("report", help="draw a crawl: an HTML file or PNG files")
    add_db_option(report)
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

    report.set_defaults(handler=_report)


def _report(args: argparse.Namespace) -> int:
    from crawler.reporting.history import read_ground_truth, read_history
    from crawler.reporting.report import write_report

    truth = None if args.ground_truth is None else read_ground_truth(args.ground_truth)
    history = asyncio.run(read_history(args.db))
    written = write_report(history, args.out, truth=truth, truth_threshold=args.truth_threshold)
    for path in written:
        print(path)
    return 0
