"""`crawler search`: the collection's pages matching a query, best first."""

from __future__ import annotations

import argparse
import asyncio
import json
import textwrap

import storage
from crawler.cli.options import add_db_option
from crawler.errors import SettingsError


def add_commands(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    search = commands.add_parser(
        "search",
        help="find the stored pages matching words, ranked by text match and relevance",
    )
    search.add_argument("query", help="words the pages must all hold (operators are words)")
    add_db_option(search)
    search.add_argument("--limit", type=int, default=10, help="hits to show (default 10)")
    search.add_argument("--min-relevance", type=float, help="only pages this relevant or more")
    search.add_argument("--host", help="only pages of this host")
    search.add_argument("--json", action="store_true", help="a JSON array of the hits")

    search.set_defaults(handler=_search)


async def find(
    db: str,
    query: str,
    *,
    limit: int = 10,
    min_relevance: float | None = None,
    host: str | None = None,
) -> list[storage.SearchHit]:
    """The hits of `query` in the crawl database `db`; a database made before the
    search index gets it built first."""
    from crawler.reporting.collection import check_database_exists

    try:
        storage.search.query_words(query)
    except ValueError as error:
        raise SettingsError(str(error)) from error
    if limit < 1:
        raise SettingsError(f"--limit must be at least 1, not {limit}")
    check_database_exists(db)
    engine = storage.open_engine(db)
    try:
        await storage.create_schema(engine)
        async with engine.connect() as connection:
            return await storage.search_pages(
                connection, query, limit=limit, min_relevance=min_relevance, host=host
            )
    finally:
        await engine.dispose()


def _search(args: argparse.Namespace) -> int:
    hits = asyncio.run(
        find(
            args.db, args.query, limit=args.limit, min_relevance=args.min_relevance, host=args.host
        )
    )
    if args.json:
        print(json.dumps([_as_json(hit) for hit in hits], ensure_ascii=False, indent=1))
    else:
        print(format_hits(hits) if hits else "no page matches")
    return 0


def _as_json(hit: storage.SearchHit) -> dict[str, object]:
    return {
        "url": hit.url,
        "title": hit.title,
        "host": hit.host,
        "relevance": None if hit.relevance is None else round(hit.relevance, 4),
        "score": round(hit.score, 4),
        "snippet": hit.snippet,
    }


def format_hits(hits: list[storage.SearchHit]) -> str:
    """Rank and title, then URL, relevance and score, then the snippet, a hit."""
    lines = []
    for rank, hit in enumerate(hits, start=1):
        relevance = "-" if hit.relevance is None else f"{hit.relevance:.3f}"
        lines.append(f"{rank}. {hit.title or '(no title)'}")
        lines.append(f"   {hit.url}  relevance {relevance}  score {hit.score:.3f}")
        snippet = " ".join(hit.snippet.split())
        lines.extend(textwrap.wrap(snippet, 96, initial_indent="   ", subsequent_indent="   "))
    return "\n".join(lines)
