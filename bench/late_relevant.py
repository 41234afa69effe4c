"""When a crawl found each relevant page of a ground-truth web, and when it could have:
one live crawl, and for each relevant page the page of the crawl that fetched it and the
page that fetched the first page linking to it (from then on it was queued).

    python bench/late_relevant.py --ground-truth /tmp/realweb/truth2/datetime \
        [--budget 3000] [--per-host-concurrency 4] [--variant qlearning | --best-first]

A relevant page queued early and fetched late was ranked low by what its links showed;
one found late and fetched soon after was reached late.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from focus_ablations import VARIANTS
from patience_waits import crawl_parser

from crawler.experiments import CrawlSettings, TruthWeb, check_served, crawl_order
from crawler.reporting.ground_truth import read_graph, read_relevance
from policies import register_frontier_policy


async def main() -> None:
    parser = crawl_parser(__doc__, 3000)
    parser.add_argument("--best-first", action="store_true", help="crawl best-first's order")
    args = parser.parse_args()
    web = TruthWeb.read(args.ground_truth, None)
    await check_served(web)
    policy = "best-first"
    if not args.best_first:
        register_frontier_policy("traced", VARIANTS[args.variant])
        policy = "traced"
    settings = CrawlSettings(args.budget, per_host_concurrency=args.per_host_concurrency)
    with tempfile.TemporaryDirectory(prefix="late-relevant-") as scratch:
        order = await crawl_order(web, policy, settings, Path(scratch))
    fetched_at: dict[str, int] = {}
    for position, url in enumerate(order[: args.budget], 1):
        fetched_at.setdefault(url, position)
    urls = list(read_relevance(args.ground_truth / "pages.tsv"))
    graph = read_graph(args.ground_truth)
    never = args.budget + 1
    known_at: dict[int, int] = {}  # by page: the crawl's page that fetched its first linking page
    for source, url in enumerate(urls):
        position = fetched_at.get(url)
        if position is None:
            continue
        for target in graph.links_of(source).tolist():
            known_at[target] = min(known_at.get(target, never), position)
    relevant = [i for i, url in enumerate(urls) if web.relevance[url] >= web.threshold]
    relevant.sort(key=lambda i: fetched_at.get(urls[i], never))
    print(f"{len(relevant)} relevant pages, {args.budget} pages crawled ({policy})")
    print(" found  fetched  queued  relevance  url")
    for found, page in enumerate(relevant, 1):
        fetched = fetched_at.get(urls[page])
        queued = known_at.get(page)
        print(
            f"{found:6d}  {fetched if fetched else '-':>7}  {queued if queued else '-':>6}"
            f"  {web.relevance[urls[page]]:9.3f}  {urls[page]}"
        )


if __name__ == "__main__":
    asyncio.run(main())
