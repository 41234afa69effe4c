"""`crawler export` and `crawler status`: reading a crawl's collection."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from crawler.cli.options import add_db_option


def add_commands(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    export = commands.add_parser("export", help="write the collection as JSON lines or CSV")
    add_db_option(export)
    export.add_argument(
        "--format",
        choices=("jsonl", "csv", "parquet"),
        default="jsonl",
        help="JSON lines, CSV or Parquet (a file: give --out; needs the extra parquet)",
    )
    export.add_argument("--text", action="store_true", help="add each page's main text")
    export.add_argument(
        "--min-relevance", type=float, help="only pages scored at least this (0..1)"
    )
    export.add_argument("--out", type=Path, help="file to write (default: standard output)")

    export.set_defaults(handler=_export)
    status = commands.add_parser("status", help="summarise a crawl")
    add_db_option(status)
    status.add_argument(
        "--relevance-threshold",
        type=float,
        help="relevance from which a page counts as relevant (default: the crawl's)",
    )
    status.add_argument("--json", action="store_true", help="one JSON object")

    status.set_defaults(handler=_status)


def _export(args: argparse.Namespace) -> int:
    from crawler.errors import SettingsError
    from crawler.reporting.collection import export, export_file

    options = {"fmt": args.format, "min_relevance": args.min_relevance, "text": args.text}
    if args.out is not None:
        count = asyncio.run(export_file(args.db, args.out, **options))
    elif args.format == "parquet":
        raise SettingsError("--format parquet writes a file: give it with --out")
    else:
        count = asyncio.run(export(args.db, sys.stdout, **options))
    print(f"exported {count} records", file=sys.stderr)
    return 0


def _status(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from crawler.reporting.collection import (
        format_sources,
        format_status,
        status,
        status_counts,
        top_sources,
    )

    async def read() -> tuple[Any, Any]:
        report = await status(args.db, relevance_threshold=args.relevance_threshold)
        return report, await top_sources(args.db)

    report, sources = asyncio.run(read())
    if args.json:
        counts = status_counts(report)
        print(
            json.dumps(
                {
                    **asdict(report),
                    "visited": counts.visited,
                    "redirects_to_fetched": counts.redirects_to_fetched,
                    "canonical_variants": counts.canonical_variants,
                    # redirects to pages fetched already and variants of them are not
                    "errors": counts.errors,
                    "top_sources": [asdict(s) for s in sources],
                }
            )
        )
        return 0
    print(format_status(report))
    if sources:
        print("sources publishing the most (as measured by their re-visits)")
        print(format_sources(sources))
    return 0
