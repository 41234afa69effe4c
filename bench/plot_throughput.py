"""Draw what bench/throughput.py measured: the medians side by side, and how the rate and
memory of one run of each kind moved as its crawl grew.

    python bench/plot_throughput.py bench/results/throughput-*.json --out docs/bench
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

KINDS = ("crawler", "scrapy", "minimal")
LABELS = {
    "crawler": "this crawler (parse, score, store)",
    "scrapy": "Scrapy CrawlSpider",
    "minimal": "minimal aiohttp + selectolax loop",
}
COLORS = {"crawler": "tab:blue", "scrapy": "tab:orange", "minimal": "tab:grey"}
WINDOW = 5  # samples (seconds) over which the rate is averaged


def load(paths: list[Path]) -> dict[int, dict[str, list[dict]]]:
    """Every file's runs by size and kind; a later file's runs of a kind replace an
    earlier one's (a re-run of one kind after a change)."""
    results: dict[int, dict[str, list[dict]]] = {}
    for path in paths:
        for size, runs in json.loads(path.read_text())["results"].items():
            results.setdefault(int(size), {}).update(runs)
    return dict(sorted(results.items()))


def medians(results: dict[int, dict[str, list[dict]]], out: Path) -> Path:
    figure, (rate_axes, memory_axes) = plt.subplots(1, 2, figsize=(11, 4))
    sizes = list(results)
    width = 0.8 / len(KINDS)
    for index, kind in enumerate(KINDS):
        rates, memory, where = [], [], []
        for position, size in enumerate(sizes):
            runs = results[size].get(kind)
            if runs:
                rates.append(statistics.median(r["pages"] / r["seconds"] for r in runs))
                memory.append(statistics.median(r["peak_rss_mb"] for r in runs))
                where.append(position + (index - 1) * width)
        rate_axes.bar(where, rates, width, label=LABELS[kind], color=COLORS[kind])
        memory_axes.bar(where, memory, width, label=LABELS[kind], color=COLORS[kind])
        for x, rate in zip(where, rates, strict=True):
            rate_axes.annotate(f"{rate:.0f}", (x, rate), ha="center", va="bottom", fontsize=8)
    names = [_pages(results, size) for size in sizes]
    for axes, label in ((rate_axes, "pages per second"), (memory_axes, "peak resident MB")):
        axes.set_xticks(range(len(sizes)), names)
        axes.set_ylabel(label)
        axes.grid(axis="y", alpha=0.3)
    rate_axes.set_yscale("log")
    rate_axes.legend(fontsize=8)
    figure.suptitle("Throughput and memory, medians of the runs (politeness off, loopback)")
    return _save(figure, out / "throughput.png")


def growth(results: dict[int, dict[str, list[dict]]], out: Path) -> Path:
    """The largest size's first run of each kind: rate and memory as the crawl grows."""
    size = max(results)
    figure, (rate_axes, memory_axes) = plt.subplots(1, 2, figsize=(11, 4))
    for kind in KINDS:
        runs = results[size].get(kind)
        if not runs or len(runs[0]["samples"]) <= WINDOW:
            continue
        samples = np.array(
            [[s[0], s[1], s[2], np.nan if s[3] is None else s[3]] for s in runs[0]["samples"]]
        )
        seconds, pages, resident, known = samples.T
        rate = (pages[WINDOW:] - pages[:-WINDOW]) / (seconds[WINDOW:] - seconds[:-WINDOW])
        rate_axes.plot(pages[WINDOW:], rate, label=LABELS[kind], color=COLORS[kind])
        if not np.all(np.isnan(known)):
            memory_axes.plot(known, resident, label=LABELS[kind], color=COLORS[kind])
        else:
            memory_axes.plot(
                pages,
                resident,
                label=LABELS[kind] + " (by pages)",
                color=COLORS[kind],
                linestyle="--",
            )
    rate_axes.set(xlabel="pages fetched", ylabel=f"pages per second ({WINDOW} s mean)")
    rate_axes.set_yscale("log")
    memory_axes.set(xlabel="URLs known", ylabel="resident MB")
    for axes in (rate_axes, memory_axes):
        axes.grid(alpha=0.3)
        axes.legend(fontsize=8)
    figure.suptitle(f"As the crawl grows: a web of {size:,} pages, one run of each")
    return _save(figure, out / "growth.png")


def _save(figure: plt.Figure, path: Path) -> Path:
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path


def _pages(results: dict[int, dict[str, list[dict]]], size: int) -> str:
    crawled = max(r["pages"] for runs in results[size].values() for r in runs)
    if crawled < size * 0.99:
        return f"{crawled:,.0f} of a\n{size:,}-page web"
    return f"{size:,} pages"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("results", type=Path, nargs="+", help="bench/throughput.py --out files")
    parser.add_argument("--out", type=Path, default=Path("docs/bench"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    results = load(args.results)
    for path in (medians(results, args.out), growth(results, args.out)):
        print(path)


if __name__ == "__main__":
    main()
