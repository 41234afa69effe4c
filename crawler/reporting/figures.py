"""The report's figures, drawn with matplotlib (an optional extra): harvest over time,
the relevance histogram, fetch outcomes, politeness by host and the controllers'
behaviour (fetcher pool, processor queue, rate estimates, losses and idle time, the
budget split between re-visits and discovery)."""

from __future__ import annotations

from typing import Any

import numpy as np

from crawler.errors import MissingExtra
from crawler.reporting.found import TOP_HOSTS
from crawler.reporting.history import CrawlHistory, harvest_rate


def pyplot() -> Any:
    try:
        import matplotlib
    except ImportError as error:
        raise MissingExtra(
            'crawler report draws with matplotlib: pip install "topical-crawler[report]"'
        ) from error
    matplotlib.use("Agg")  # files only, no screen
    import matplotlib.pyplot as plt

    return plt


def figures(
    history: CrawlHistory, truth: dict[str, float] | None, truth_threshold: float
) -> dict[str, tuple[Any, str]]:
    """name: (figure, caption), in the report's order."""
    plt = pyplot()
    return {
        "harvest": _harvest(plt, history, truth, truth_threshold),
        "relevance": _relevance(plt, history),
        "outcomes": _outcomes(plt, history),
        "politeness": _politeness(plt, history),
        "controllers": _controllers(plt, history),
    }


def _harvest(
    plt: Any, history: CrawlHistory, truth: dict[str, float] | None, truth_threshold: float
) -> tuple[Any, str]:
    figure, (by_page, by_time) = plt.subplots(1, 2, figsize=(11, 4))
    pages = np.arange(1, len(history.urls) + 1)
    relevant = np.nan_to_num(history.relevance, nan=0.0) >= history.relevance_threshold
    by_page.plot(pages, harvest_rate(relevant), label="by the crawler's score")
    caption = (
        "Left: the share of relevant pages among the first N fetched (harvest rate). "
        "Right: relevant pages collected over time."
    )
    minutes = (history.fetched_at - history.fetched_at[0]) / 60 if len(pages) else pages
    by_time.plot(minutes, np.cumsum(relevant), label="by the crawler's score")
    if truth is not None:
        truly = history.truth(truth) >= truth_threshold
        by_page.plot(pages, harvest_rate(truly), label=f"ground truth >= {truth_threshold}")
        by_time.plot(minutes, np.cumsum(truly), label=f"ground truth >= {truth_threshold}")
        caption += " With ground truth, both by the crawler's score and by the truth."
    by_page.set(xlabel="pages fetched", ylabel="harvest rate", ylim=(0, 1.02))
    by_page.set_xscale("log")
    by_time.set(xlabel="minutes since the first fetch", ylabel="relevant pages")
    for axes in (by_page, by_time):
        axes.grid(alpha=0.3)
        axes.legend()
    figure.tight_layout()
    return figure, caption


def _relevance(plt: Any, history: CrawlHistory) -> tuple[Any, str]:
    figure, axes = plt.subplots(figsize=(7, 3.5))
    scored = history.relevance[~np.isnan(history.relevance)]
    top = max(float(scored.max(initial=0.0)), history.relevance_threshold) * 1.05
    axes.hist(scored, bins=50, range=(0, top), color="tab:blue")
    axes.axvline(history.relevance_threshold, color="tab:red", linestyle="--", label="threshold")
    axes.set(xlabel="relevance (cosine similarity to the topic)", ylabel="pages")
    axes.set_yscale("log")
    axes.legend()
    figure.tight_layout()
    return figure, f"The relevance of the {len(scored):,} scored pages."


def _outcomes(plt: Any, history: CrawlHistory) -> tuple[Any, str]:
    figure, axes = plt.subplots(figsize=(7, 0.4 * max(len(history.outcomes), 3) + 1))
    ordered = history.outcomes.most_common()
    names = [name for name, _ in ordered][::-1]
    counts = [count for _, count in ordered][::-1]
    axes.barh(names, counts, color="tab:green")
    for y, count in enumerate(counts):
        axes.annotate(f" {count:,}", (count, y), va="center")
    axes.set(xlabel="URLs")
    if counts and max(counts) > 100 * min(counts):  # rare outcomes stay visible
        axes.set_xscale("log")
    figure.tight_layout()
    return figure, "How every URL done ended: ok, or the reason it was not stored."


def _politeness(plt: Any, history: CrawlHistory) -> tuple[Any, str]:
    top = sorted(history.host_waits.items(), key=lambda item: -item[1].closed_seconds)
    top = top[:TOP_HOSTS][::-1]
    figure, axes = plt.subplots(figsize=(8, 0.3 * max(len(top), 4) + 1.2))
    axes.barh([host for host, _ in top], [w.closed_seconds for _, w in top], color="tab:orange")
    for y, (_host, waits) in enumerate(top):
        gap = waits.closed_seconds / waits.requests if waits.requests else 0.0
        axes.annotate(f" {waits.requests:,} requests, {gap:.2f} s each", (0, y), va="center")
    axes.set(xlabel="seconds closed to new requests (delay, Crawl-delay, backoff, Retry-After)")
    figure.tight_layout()
    return figure, (
        f"The {len(top)} hosts politeness kept closed longest, of {len(history.host_waits)}; "
        "each bar is the time the host was closed after responses, with the mean gap."
    )


def _controllers(plt: Any, history: CrawlHistory) -> tuple[Any, str]:
    samples = history.timeline
    figure, grid = plt.subplots(4, 2, figsize=(11, 12), sharex=True)
    if not samples:
        figure.suptitle("no timeline recorded")
        return figure, "The crawl recorded no timeline (it ran before the crawler kept one)."
    start = samples[0].taken_at
    minutes = np.array([(s.taken_at - start) / 60 for s in samples])

    def series(name: str) -> np.ndarray:
        return np.array([float(s.values.get(name, 0.0)) for s in samples])

    def per_second(values: np.ndarray) -> np.ndarray:
        """A counter's growth per second between samples, restarting with each run."""
        runs = np.array([s.values.get("run", 0.0) for s in samples])
        taken = np.array([s.taken_at for s in samples])
        rate = np.zeros(len(values))
        same_run = runs[1:] == runs[:-1]
        gaps = np.maximum(np.diff(taken), 1e-9)
        rate[1:] = np.where(same_run, np.diff(values) / gaps, np.nan)
        rate[0] = np.nan
        return rate

    budget = {
        use: np.array([float(s.values.get("budget", {}).get(use, 0.0)) for s in samples])
        for use in ("revisit", "discovery")
    }
    panels = [
        (
            "fetcher pool",
            [("target", series("fetchers_target")), ("in flight", series("in_flight"))],
        ),
        ("processor queue (pages)", [("queue", series("response_queue"))]),
        (
            "rate estimates (per second)",
            [
                ("lambda, one fetcher", series("arrival_rate")),
                ("mu, processor", series("service_rate")),
            ],
        ),
        (
            "losses and idling (per second)",
            [
                ("pages lost at a full queue", per_second(series("losses"))),
                ("processor idle share", per_second(series("processor_idle_seconds"))),
            ],
        ),
        (
            "fetches stored per second, by use",
            [(use, per_second(values)) for use, values in budget.items()],
        ),
        (
            "frontier (URLs)",
            [
                ("known, not fetched", series("frontier")),
                ("in memory", series("frontier_in_memory")),
            ],
        ),
        ("resident memory (MB)", [("resident", series("resident_bytes") / 2**20)]),
        (
            "open file descriptors and event-loop tasks",
            [("file descriptors", series("open_fds")), ("tasks", series("tasks"))],
        ),
    ]
    for axes, (title, lines) in zip(grid.flat, panels, strict=True):
        for label, values in lines:
            axes.plot(minutes, values, label=label)
        axes.set_title(title, fontsize=10)
        axes.grid(alpha=0.3)
        axes.legend(fontsize=8)
    for axes in grid[-1]:
        axes.set_xlabel("minutes since the first sample")
    runs = [s.values.get("run") for s in samples]
    for index in range(1, len(samples)):
        if runs[index] != runs[index - 1]:  # a restart: counters begin again
            for axes in grid.flat:
                axes.axvline(minutes[index], color="grey", linestyle=":")
    figure.tight_layout()
    return figure, (
        "The controllers, sampled at every checkpoint: the fetcher pool's target and the "
        "visits in flight, the processor's queue, the rate estimates the pool is sized "
        "with, pages lost at a full queue and the processor's idle share, the fetch "
        "budget's split between re-visits and discovery, the frontier, and the process's "
        "memory, file descriptors and tasks. Dotted lines mark restarts."
    )
