"""Nanoseconds a resolved link on real pages: the crawler's link resolution at a
revision of the code (`--old`, yarl underneath before the URL Standard's parser) against
the working tree's, each one's `canonicalize` for every link (no resolver), and the two
parsers' joins alone (yarl's `URL.join`, Ada's `join_url`).

The pages are Python's HTML documentation (`/usr/share/doc/python3/html`), served in
thought at http://docs.example/; each page's `a[href]` values are read once, untimed,
then resolved page by page with one resolver for all pages, as a crawl's analysis does.
Each figure is the median CPU time of `--repeats` runs, the versions interleaved.

    python -m bench links [--old REV] [--repeats 15] [--pages N]
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from ada_url import join_url
from selectolax.lexbor import LexborHTMLParser
from yarl import URL

from bench.conformance import urls_at
from crawler.net import urls as new_urls

PAGES = Path("/usr/share/doc/python3/html")
SITE = "http://docs.example/"
OLD_REVISION = "508fca2"  # the last revision whose resolver stands on yarl


def real_pages(root: Path, limit: int) -> list[tuple[str, list[str]]]:
    """(URL, hrefs) of up to `limit` pages under `root`, in path order."""
    pages = []
    for path in sorted(root.rglob("*.html"))[:limit]:
        tree = LexborHTMLParser(path.read_bytes().decode("utf-8", errors="replace"))
        hrefs = [node.attributes.get("href") or "" for node in tree.css("a[href]")]
        pages.append((SITE + path.relative_to(root).as_posix(), hrefs))
    return pages


def with_resolver(module: ModuleType) -> Callable[[list[tuple[str, list[str]]]], int]:
    def run(pages: list[tuple[str, list[str]]]) -> int:
        resolver = module.LinkResolver()
        resolve, count = resolver.resolve, 0
        for url, hrefs in pages:
            base = resolver.base(URL(url, encoded=True))
            for href in hrefs:
                resolve(href, base)
            count += len(hrefs)
        return count

    return run


def parser_alone(module: ModuleType) -> Callable[[list[tuple[str, list[str]]]], int]:
    def run(pages: list[tuple[str, list[str]]]) -> int:
        count = 0
        for url, hrefs in pages:
            base = URL(url, encoded=True)
            for href in hrefs:
                with contextlib.suppress(module.BadUrlError):
                    module.canonicalize(href, base=base)
            count += len(hrefs)
        return count

    return run


def bare(join: Callable[[str, str], object]) -> Callable[[list[tuple[str, list[str]]]], int]:
    """A parser's join alone, its errors ignored: no canonical form, no memory."""

    def run(pages: list[tuple[str, list[str]]]) -> int:
        count = 0
        for url, hrefs in pages:
            for href in hrefs:
                with contextlib.suppress(ValueError, TypeError):
                    join(url, href)
            count += len(hrefs)
        return count

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", default=OLD_REVISION, help="revision to compare with")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--pages", type=int, default=10_000, help="at most this many pages")
    args = parser.parse_args()
    if not PAGES.is_dir():
        sys.exit(f"no pages at {PAGES}: install python3-doc")
    pages = real_pages(PAGES, args.pages)
    old_urls = urls_at(args.old)
    runs = {
        f"resolver at {args.old}": with_resolver(old_urls),
        "resolver now": with_resolver(new_urls),
        f"canonicalize at {args.old}": parser_alone(old_urls),
        "canonicalize now": parser_alone(new_urls),
        "yarl's join alone": bare(lambda url, href: URL(url).join(URL(href))),
        "Ada's join_url alone": bare(join_url),
    }
    timings: dict[str, list[float]] = {name: [] for name in runs}
    links = 0
    for _ in range(args.repeats):
        for name, run in runs.items():
            started = time.process_time_ns()  # CPU time: others' load on the machine aside
            links = run(pages)
            timings[name].append((time.process_time_ns() - started) / links)
    print(f"{len(pages)} pages, {links} links, median of {args.repeats} runs")
    for name, times in timings.items():
        print(f"  {name:<28}{statistics.median(times):>8.0f} ns/link")


if __name__ == "__main__":
    main()
