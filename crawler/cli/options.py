"""Options shared by the commands: the database every command that reads a crawl opens."""

from __future__ import annotations

import argparse

from crawler.config import defaults

DB_HELP = (
    "the crawl's database: a SQLite file (crawl.db, sqlite:///crawl.db) or "
    f"postgresql://USER@HOST/DB (default {defaults.DB})"
)


def add_db_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", default=defaults.DB, help=DB_HELP)
