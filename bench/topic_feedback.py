"""What the relevant pages' words in the links' estimates (`topic_feedback`, Rocchio
feedback) do to each policy's focus on ground-truth webs: live crawls of every policy at
every weight, interleaved, one topic after another, with recall at 100 / 500 / 1,000
pages; then each configuration's medians, summed over the topics, and the cutoffs where
its median is behind the first configuration's (the first policy at the first weight).

    python bench/topic_feedback.py --ground-truth /tmp/realweb/truth/git \
        /tmp/realweb2/truth/mvcc [--weights 1 0] [--policies best-first qlearning] \
        [--repeat 3] [--budget 1000] [--per-host-concurrency 4]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
from pathlib import Path

from crawler.experiments import CrawlSettings, TruthWeb, check_served, crawl_order, focus

CUTOFFS = (100, 500, 1000)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ground-truth", type=Path, nargs="+", required=True)
    parser.add_argument("--weights", type=float, nargs="+", default=[1.0, 0.0])
    parser.add_argument("--policies", nargs="+", default=["best-first", "qlearning"])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--budget", type=int, default=1000)
    parser.add_argument("--per-host-concurrency", type=int, default=4)
    args = parser.parse_args()
    webs = {truth.name: TruthWeb.read(truth) for truth in args.ground_truth}
    for web in webs.values():
        await check_served(web)
    configs = [(policy, weight) for weight in args.weights for policy in args.policies]
    cutoffs = [n for n in CUTOFFS if n <= args.budget]
    recall: dict[tuple[str, str, float], list[list[float]]] = {}
    with tempfile.TemporaryDirectory(prefix="topic-feedback-") as scratch:
        for run in range(args.repeat):
            for topic, web in webs.items():
                for policy, weight in configs:
                    settings = CrawlSettings(
                        args.budget,
                        per_host_concurrency=args.per_host_concurrency,
                        topic_feedback=weight,
                    )
                    order = await crawl_order(web, policy, settings, Path(scratch))
                    measured = focus(web.truth_of(order, args.budget), web, args.budget)
                    found = [measured[f"recall@{n}"] for n in cutoffs]
                    recall.setdefault((topic, policy, weight), []).append(found)
                    shown = " ".join(f"{value:.3f}" for value in found)
                    print(f"run {run} {topic} {policy} feedback={weight:g}: {shown}", flush=True)
    medians = {
        key: [statistics.median(values) for values in zip(*runs, strict=True)]
        for key, runs in recall.items()
    }
    baseline = configs[0]
    shown_cutoffs = ", ".join(map(str, cutoffs))
    print(f"\nmedians over {args.repeat} runs, recall at {shown_cutoffs} pages summed over topics")
    for policy, weight in configs:
        summed = [sum(v) for v in zip(*(medians[(t, policy, weight)] for t in webs), strict=True)]
        behind = [
            f"{topic}@{n}"
            for topic in webs
            for n, mine, theirs in zip(
                cutoffs, medians[(topic, policy, weight)], medians[(topic, *baseline)], strict=True
            )
            if mine < theirs
        ]
        shown = " / ".join(f"{value:.2f}" for value in summed)
        print(f"{policy} feedback={weight:g}: {shown}; behind the first at {len(behind)}: {behind}")


if __name__ == "__main__":
    asyncio.run(main())
