"""`crawler testbed`: serve the synthetic topical web on loopback."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
from pathlib import Path

from crawler.cli.research import read_sources


def add_commands(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    testbed = commands.add_parser("testbed", help="serve a synthetic topical web on loopback")
    testbed.add_argument(
        "--port",
        type=int,
        default=8080,
        help="port of every host, at 127.0.0.1, 127.0.0.2, ... (default 8080; 0: any free)",
    )
    testbed.add_argument(
        "--seed", type=int, default=0, help="random seed: the same seed, the same web"
    )
    testbed.add_argument("--pages", type=int, default=5000, help="pages in all (default 5000)")
    testbed.add_argument(
        "--hosts", type=int, default=6, help="hosts the pages are spread over (default 6)"
    )
    testbed.add_argument(
        "--latency", type=float, default=0.0, help="mean seconds before each page is served"
    )
    testbed.add_argument("--crawl-delay", type=float, help="Crawl-delay in robots.txt")
    testbed.add_argument(
        "--paragraphs",
        type=int,
        default=3,
        help="paragraphs of text a page (more cost more to process)",
    )
    testbed.add_argument("--ground-truth", type=Path, help="write the graph and relevance here")
    testbed.add_argument(
        "--sources",
        type=Path,
        help="ephemeral sources to serve: CSV xi,mu,Lambda (mu and Lambda per second)",
    )

    testbed.set_defaults(handler=_testbed)


def _testbed(args: argparse.Namespace) -> int:
    from testbed.server import ServerSpec, Testbed
    from testbed.sources import EphemeralSource
    from testbed.web import WebSpec

    sources = [
        EphemeralSource(s.xi, s.mu, s.arrival_rate)
        for s in (read_sources(args.sources) if args.sources else [])
    ]

    async def serve() -> None:
        bed = Testbed(
            WebSpec(seed=args.seed, pages=args.pages, hosts=args.hosts),
            ServerSpec(
                port=args.port,
                latency=args.latency,
                crawl_delay=args.crawl_delay,
                paragraphs=args.paragraphs,
            ),
            sources=sources,
        )
        async with bed:
            print(f"testbed: {args.pages} pages on {', '.join(bed.base_urls)}")
            print(f"seed: {bed.seeds[0]}\ntopic: {bed.topic}")
            if args.ground_truth:
                bed.write_ground_truth(args.ground_truth)
                truth = args.ground_truth
                print(
                    f"crawl it: crawler run --seeds-file {truth / 'seeds.txt'} "
                    f"--topic-file {truth / 'topic.txt'} --allow-private-networks"
                )
            for i in range(len(sources)):
                print(f"source {i}: {bed.source_url(i)}")
            if sources:
                print(f"ledger of collected worth: {bed.base_urls[0]}/_ledger")
            print(end="", flush=True)
            await asyncio.Event().wait()

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve())
    return 0
