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
        "--format", choices=("jsonl", "csv"), default="jsonl", help="JSON lines or CSV"
    )
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
    from crawler.reporting.collection import export

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
                    "errors": counts.errors,  # redirects to pages fetched already are not
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
