"""Live focus experiments: one web whose pages' true relevance is known, crawled once per
frontier policy from the same seeds, and how soon each crawl found the relevant pages.

A crawl's order is the order its pages were fetched (`crawler.reporting.history`); its
focus is read against the ground truth: the harvest rate and the recall of the relevant
pages (true relevance at the threshold or above) within the first N fetched, the pages
fetched until recall reached 0.9, and P, the sum of recall over the fetches, as a
fraction of its upper bound over as many fetches (O'Meara & Patel, eq. 3); and where it
spent its pages, host by host, beside the relevant pages each host holds. Runs are
interleaved (every policy once, then again), so a drift of the machine touches each
policy alike; the summary is the median over runs.
"""

from __future__ import annotations

import itertools
import math
import statistics
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar
from urllib.parse import urlsplit

import aiohttp
import numpy as np
from prometheus_client import CollectorRegistry

from crawler.config import CrawlConfig, defaults
from crawler.errors import ConfigError
from crawler.reporting.history import first_found, harvest_rate, read_ground_truth, read_history
from crawler.service import run_crawl
from policies.offline.quality import schedule_performance, upper_bound

CHECKPOINTS = (100, 500, 1000, 5000)
RECALL_TARGET = 0.9


@dataclass(frozen=True)
class TruthWeb:
    """A web served somewhere, with its pages' true relevance to the topic."""

    seeds: tuple[str, ...]
    topic: str
    relevance: dict[str, float]  # by URL, as the crawler stores it
    threshold: float  # a page is relevant at this true relevance or above

    @property
    def hostnames(self) -> tuple[str, ...]:
        """The hosts of the web: its seeds' and its pages' (a testbed's one seed is on
        one of several hosts)."""
        urls = itertools.chain(self.seeds, self.relevance)
        return tuple(sorted({urlsplit(url).hostname or "" for url in urls}))

    @property
    def relevant(self) -> int:
        return sum(value >= self.threshold for value in self.relevance.values())

    def truth_of(self, order: Sequence[str], budget: int) -> np.ndarray:
        """The true relevance each of the first `budget` fetches of a crawl's order found
        (a page fetched again finds nothing: `first_found`)."""
        return first_found(order[:budget], self.relevance)

    def relevant_by_host(self) -> dict[str, int]:
        """The relevant pages of each host (`host:port`) that holds any."""
        counts: dict[str, int] = {}
        for url, value in self.relevance.items():
            if value >= self.threshold:
                host = urlsplit(url).netloc
                counts[host] = counts.get(host, 0) + 1
        return counts

    def pages_by_host(self, order: Sequence[str], budget: int) -> dict[str, tuple[int, int]]:
        """Where a crawl spent its first `budget` pages: by host (`host:port`), the pages
        fetched there and the relevant ones among them."""
        spent: dict[str, tuple[int, int]] = {}
        for url, found in zip(order, self.truth_of(order, budget), strict=False):
            host = urlsplit(url).netloc
            pages, relevant = spent.get(host, (0, 0))
            spent[host] = (pages + 1, relevant + int(found >= self.threshold))
        return spent

    @classmethod
    def read(cls, directory: Path, threshold: float | None = None) -> TruthWeb:
        """A ground-truth directory: pages.tsv, seeds.txt, topic.txt, and threshold.txt
        unless `threshold` is given."""
        try:
            seeds = tuple((directory / "seeds.txt").read_text().split())
            topic = (directory / "topic.txt").read_text().strip()
            if threshold is None:
                threshold = float((directory / "threshold.txt").read_text())
        except OSError as error:
            raise ConfigError(
                f"ground truth {str(directory)!r}: cannot read {error.filename}: {error.strerror}"
                + ("; or give --truth-threshold" if "threshold" in str(error.filename) else "")
            ) from None
        except ValueError:
            raise ConfigError(
                f"ground truth {str(directory)!r}: threshold.txt is no number"
            ) from None
        try:
            relevance = read_ground_truth(directory)
        except (OSError, ValueError) as error:
            raise ConfigError(f"ground truth {str(directory)!r}: {error}") from None
        if not seeds or not topic:
            raise ConfigError(f"ground truth {str(directory)!r}: no seeds or no topic")
        return cls(seeds, topic, relevance, threshold)


@dataclass(frozen=True)
class CrawlSettings:
    budget: int = 1_000  # pages fetched in each crawl
    concurrency: int = 8
    per_host_concurrency: int = 1
    patience: float | None = None  # every policy's; None: each policy's own
    topic_feedback: float = defaults.TOPIC_FEEDBACK  # the relevant pages' words in estimates


@dataclass
class LiveResults:
    web: TruthWeb
    budget: int
    runs: dict[str, list[dict[str, float]]] = field(default_factory=dict)  # by policy
    orders: dict[str, list[list[str]]] = field(default_factory=dict)  # URLs, fetch order

    def medians(self) -> dict[str, dict[str, float]]:
        return {
            policy: {key: statistics.median(run[key] for run in runs) for key in runs[0]}
            for policy, runs in self.runs.items()
        }

    def hosts(self) -> dict[str, list[dict[str, tuple[int, int]]]]:
        """Each crawl's pages and relevant pages by host, by policy, run by run."""
        return {
            policy: [self.web.pages_by_host(order, self.budget) for order in orders]
            for policy, orders in self.orders.items()
        }

    def host_medians(self) -> dict[str, dict[str, tuple[float, float]]]:
        """By policy and host, the median over runs of the pages a crawl spent there and
        of the relevant ones it found (a run that fetched nothing there counts 0), for
        the hosts holding relevant pages or fetched in some run."""
        by_run = self.hosts()
        hosts = set(self.web.relevant_by_host())
        hosts.update(host for runs in by_run.values() for run in runs for host in run)
        return {
            policy: {
                host: (
                    statistics.median(run.get(host, (0, 0))[0] for run in runs),
                    statistics.median(run.get(host, (0, 0))[1] for run in runs),
                )
                for host in sorted(hosts)
            }
            for policy, runs in by_run.items()
        }

    def truth_of(self, order: Sequence[str]) -> np.ndarray:
        """The true relevance of each page in a crawl's order."""
        return self.web.truth_of(order, self.budget)


async def crawl_order(
    web: TruthWeb, policy: str, settings: CrawlSettings, scratch: Path
) -> list[str]:
    """The URLs of the pages one crawl of `web` stored, in the order it fetched them."""
    db = f"sqlite+aiosqlite:///{scratch / f'{policy}.db'}"
    (scratch / f"{policy}.db").unlink(missing_ok=True)
    config = CrawlConfig(
        seeds=web.seeds,
        topic=web.topic,
        db=db,
        delay=0.0,
        concurrency=settings.concurrency,
        per_host_concurrency=settings.per_host_concurrency,
        max_pages=settings.budget,
        policy=policy,
        patience=settings.patience,
        topic_feedback=settings.topic_feedback,
        metrics_port=0,
        allow_private_networks=True,
        allowed_domains=web.hostnames,
    )
    await run_crawl(config, registry=CollectorRegistry(), handle_signals=False)
    return (await read_history(db)).urls


def focus(fetched: np.ndarray, web: TruthWeb, budget: int) -> dict[str, float]:
    """Harvest and recall within the first N fetched (N of CHECKPOINTS within the
    budget; a crawl that ended sooner counts what it fetched), the pages fetched until
    recall reached 0.9 (inf: not within the crawl), and P over its upper bound, for the
    true relevance of the pages in a crawl's order."""
    relevance = np.fromiter(web.relevance.values(), dtype=np.float64)
    relevant = fetched >= web.threshold
    found = np.cumsum(relevant) / max(web.relevant, 1)
    within = [n for n in CHECKPOINTS if n <= budget]
    report = {f"recall@{n}": float(found[min(n, len(found)) - 1]) for n in within}
    report |= {f"harvest@{n}": float(np.mean(relevant[:n])) for n in within}
    reached = np.flatnonzero(found >= RECALL_TARGET)
    report["pages_to_90"] = float(reached[0] + 1) if len(reached) else math.inf
    report["pages"] = float(len(fetched))
    bound = upper_bound(relevance, len(fetched))
    report["p_over_upper"] = schedule_performance(fetched, float(relevance.sum())) / bound
    return report


SEED_TIMEOUT = 5.0  # seconds a seed has to answer before the web counts as not served


async def check_served(web: TruthWeb) -> None:
    """An error that says so if none of the seeds answers (a crawl of a web that is not
    served would wait for its hosts' robots.txt, and try again, for a long time)."""
    client_timeout = aiohttp.ClientTimeout(total=SEED_TIMEOUT)
    async with aiohttp.ClientSession(timeout=client_timeout) as session:
        for seed in web.seeds:
            try:
                async with session.get(seed, allow_redirects=False) as response:
                    await response.read()
                    return
            except (aiohttp.ClientError, TimeoutError):
                continue
    raise ConfigError(f"none of the seeds ({', '.join(web.seeds[:3])}) answers: is the web served?")


T = TypeVar("T")


def rotated(items: Sequence[T], run: int) -> list[T]:
    """`items` in the order of run `run` of an interleaved experiment: each run starts one
    further along, so that no item always takes the same turn. A crawl's order depends on
    its timing (which host's slot comes free first), which what ran before it in the same
    process may change."""
    shift = run % len(items) if items else 0
    return [*items[shift:], *items[:shift]]


async def live_experiment(
    web: TruthWeb,
    policies: Sequence[str],
    *,
    repeat: int = 1,
    settings: CrawlSettings = CrawlSettings(),
    on_run: Callable[[str, int, dict[str, float]], None] | None = None,
) -> LiveResults:
    """Crawl `web` `repeat` times with each policy, interleaved, and measure each crawl."""
    await check_served(web)
    results = LiveResults(web, settings.budget)
    with tempfile.TemporaryDirectory(prefix="crawler-experiment-") as scratch:
        for run in range(repeat):
            for policy in rotated(policies, run):
                order = await crawl_order(web, policy, settings, Path(scratch))
                if not order:
                    raise ConfigError(
                        f"no page of the seeds ({', '.join(web.seeds[:3])}) could be fetched: "
                        "is the web served?"
                    )
                measured = focus(results.truth_of(order), web, settings.budget)
                results.runs.setdefault(policy, []).append(measured)
                results.orders.setdefault(policy, []).append(order)
                if on_run is not None:
                    on_run(policy, run, measured)
    return results


def plot_curves(results: LiveResults, path: Path, title: str) -> None:
    """The harvest rate and the recall over the pages fetched, for every N: the median
    over runs of each policy, and the range between runs."""
    try:
        import matplotlib
    except ImportError:
        raise ConfigError(
            "plotting needs matplotlib: pip install 'topical-crawler[report]'"
        ) from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (harvest_axes, recall_axes) = plt.subplots(1, 2, figsize=(11, 4))
    medians = results.medians()
    relevant = max(results.web.relevant, 1)
    for policy, orders in results.orders.items():
        hits = [results.truth_of(order) >= results.web.threshold for order in orders]
        length = min(len(hit) for hit in hits)
        pages = np.arange(1, length + 1)
        label = f"{policy} (P / upper bound {medians[policy]['p_over_upper']:.3f})"
        color = None
        for axes, curves in (
            (harvest_axes, np.array([harvest_rate(hit[:length]) for hit in hits])),
            (recall_axes, np.array([np.cumsum(hit[:length]) / relevant for hit in hits])),
        ):
            (line,) = axes.plot(pages, np.median(curves, axis=0), label=label, color=color)
            color = line.get_color()
            low, high = curves.min(axis=0), curves.max(axis=0)
            axes.fill_between(pages, low, high, color=color, alpha=0.15)
    threshold = results.web.threshold
    harvest_axes.set(xlabel="pages fetched", ylabel=f"harvest rate (truth >= {threshold})")
    harvest_axes.set_xscale("log")
    recall_axes.set(xlabel="pages fetched", ylabel=f"recall of the {relevant} relevant pages")
    for axes in (harvest_axes, recall_axes):
        axes.set_ylim(0, 1)
        axes.grid(alpha=0.3)
    recall_axes.legend(fontsize=8)
    figure.suptitle(title, fontsize=10)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
