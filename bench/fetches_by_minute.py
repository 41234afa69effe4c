"""A crawl's fetches minute by minute, from its database: how many, and what share were
redirected or failed. Shows what a slow stretch was fetching (e.g. a soak's, kept with
`python bench/soak.py --db soak.db`).

    python bench/fetches_by_minute.py soak.db [--every 60]
"""

from __future__ import annotations

import argparse
import sqlite3
from collections import defaultdict
from datetime import datetime
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("db", type=Path, help="the crawl's SQLite file")
    parser.add_argument("--every", type=float, default=60.0, help="seconds a row")
    args = parser.parse_args()
    if not args.db.is_file():
        parser.error(f"no database at {args.db}")
    connection = sqlite3.connect(f"file:{args.db}?mode=ro", uri=True)
    rows = connection.execute(
        "SELECT fetched_at, url, final_url, error FROM urls WHERE fetched_at IS NOT NULL"
    ).fetchall()
    if not rows:
        parser.error(f"{args.db} holds no fetched page")
    fetched = [(datetime.fromisoformat(row[0]).timestamp(), *row[1:]) for row in rows]
    start = min(row[0] for row in fetched)
    # per interval: pages, redirected, failed
    counts: dict[int, list[int]] = defaultdict(lambda: [0, 0, 0])
    for at, url, final_url, error in fetched:
        bucket = counts[int((at - start) // args.every)]
        bucket[0] += 1
        bucket[1] += final_url is not None and final_url != url
        bucket[2] += error is not None
    print(" minute  pages/s  redirected  failed")
    for index in sorted(counts):
        pages, redirected, failed = counts[index]
        print(
            f"{index * args.every / 60:7.1f} {pages / args.every:8.1f} "
            f"{redirected / pages:11.3f} {failed / pages:7.3f}"
        )


if __name__ == "__main__":
    main()
