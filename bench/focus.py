"""Focus of one live crawl per frontier policy: harvest and P on the testbed, or on a
web served elsewhere with its ground truth.

Crawls the testbed (in this process) once per policy and seed, politeness off, and
reads the collection in the order pages were fetched: the harvest rate is the share of
truly relevant pages (ground-truth relevance >= 0.4) among the first N fetched, and P
(O'Meara & Patel, eq. 3) is the sum of recall over the crawl's fetches as a fraction
of the upper bound over as many fetches.

    python bench/focus.py [--pages 20000] [--budget 5000] [--seeds 0 1 2]
        [--policies bfs best-first qlearning] [--json] [--plot docs/bench/focus.png]

With --ground-truth DIR (pages.tsv, seeds.txt and topic.txt, as `crawler testbed
--ground-truth` or `bench/realweb/ground_truth.py` write them) it crawls DIR's seeds,
already served, on the topic of DIR/topic.txt, once per policy; --truth-threshold is
then the ground-truth relevance from which a page counts (the real web's: 0.15):

    python bench/focus.py --ground-truth /tmp/realweb/truth/git --truth-threshold 0.15 \
        --budget 1000 --repeat 3 --per-host-concurrency 4

`crawler experiment live` runs the same crawls from one command, for one web. A policy
named `ablation-<variant>` is one of `bench/focus_ablations.py`'s variants (`--policies
best-first qlearning ablation-unraised`).

It reports, besides the harvest, the recall of the relevant pages within the first N
fetched and the pages fetched until recall reached 0.9 (inf: not within the budget).

--plot draws the harvest rate over the first N fetched, for every N: the median over
seeds of each policy, and the range between the seeds.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
from pathlib import Path

import numpy as np

from crawler.experiments import CrawlSettings, TruthWeb, crawl_order, focus
from crawler.reporting.history import harvest_rate
from policies import frontier_policy_names
from testbed.server import Testbed
from testbed.web import WebSpec

TRULY_RELEVANT = 0.4


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pages", type=int, default=20_000)
    parser.add_argument("--budget", type=int, default=5_000)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--policies", nargs="+", default=frontier_policy_names())
    parser.add_argument("--ground-truth", type=Path, help="crawl this web, served already")
    parser.add_argument("--truth-threshold", type=float, default=TRULY_RELEVANT)
    parser.add_argument(
        "--repeat", type=int, default=1, help="crawls of a --ground-truth web per policy"
    )
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--per-host-concurrency", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--plot", help="draw the harvest curves here (a PNG file)")
    args = parser.parse_args()
    if any(name.startswith("ablation-") for name in args.policies):
        from focus_ablations import register_variants  # bench/focus_ablations.py's

        register_variants()
    threshold = args.truth_threshold
    results: dict[str, list[dict[str, float]]] = {name: [] for name in args.policies}
    curves: dict[str, list[np.ndarray]] = {name: [] for name in args.policies}

    async def crawl_all(label: str, web: TruthWeb) -> None:
        settings = CrawlSettings(args.budget, args.concurrency, args.per_host_concurrency)
        with tempfile.TemporaryDirectory() as scratch:
            for name in args.policies:
                order = await crawl_order(web, name, settings, Path(scratch))
                fetched = web.truth_of(order, args.budget)
                results[name].append(focus(fetched, web, args.budget))
                curves[name].append(harvest_rate(fetched >= web.threshold))
                if not args.json:
                    print(f"{label} {name}: {results[name][-1]}", flush=True)

    if args.ground_truth:
        web = TruthWeb.read(args.ground_truth, threshold)
        for run in range(args.repeat):  # the policies interleaved, run after run
            await crawl_all(f"{args.ground_truth} run {run}", web)
        args.title = f"{args.ground_truth}: {web.topic!r}"
    else:
        for seed in args.seeds:
            async with Testbed(WebSpec(pages=args.pages, seed=seed)) as bed:
                truth = {bed.page_url(p): float(bed.web.relevance[p]) for p in range(args.pages)}
                await crawl_all(
                    f"seed {seed}", TruthWeb(tuple(bed.seeds), bed.topic, truth, threshold)
                )
        args.title = (
            f"Testbed of {args.pages:,} pages, seeds {', '.join(map(str, args.seeds))}: "
            "median and range"
        )
    medians = {
        name: {key: statistics.median(run[key] for run in runs) for key in runs[0]}
        for name, runs in results.items()
    }
    if args.plot:
        plot_harvest(curves, medians, args)
    if args.json:
        print(json.dumps({"runs": results, "medians": medians}))
        return
    keys = list(next(iter(medians.values())))
    print(f"\n{args.title}, budget {args.budget}")
    print(f"{'policy':<12}" + "".join(f"{key:>14}" for key in keys))
    for name, values in medians.items():
        print(f"{name:<12}" + "".join(f"{values[key]:>14.3f}" for key in keys))


def plot_harvest(
    curves: dict[str, list[np.ndarray]],
    medians: dict[str, dict[str, float]],
    args: argparse.Namespace,
) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(7, 4))
    for name, runs in curves.items():
        length = min(len(curve) for curve in runs)
        stacked = np.array([curve[:length] for curve in runs])
        pages = np.arange(1, length + 1)
        label = f"{name} (P / upper bound {medians[name]['p_over_upper']:.3f})"
        (line,) = axes.plot(pages, np.median(stacked, axis=0), label=label)
        axes.fill_between(
            pages, stacked.min(axis=0), stacked.max(axis=0), color=line.get_color(), alpha=0.15
        )
    axes.set(xlabel="pages fetched", ylabel=f"harvest rate (truth >= {args.truth_threshold})")
    axes.set_xscale("log")
    axes.set_ylim(0, 1)
    axes.set_title(args.title, fontsize=10)
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(args.plot, dpi=100)
    print(f"plotted {args.plot}")


if __name__ == "__main__":
    asyncio.run(main())
