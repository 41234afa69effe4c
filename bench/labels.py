"""The topic learned from a user's labels, against a ground truth (docs/labels.md).

For each truth directory (bench/realweb's format: pages.tsv, seeds.txt, topic.txt):
crawl `--pages` pages; then, on three copies of that crawl, no labels, `--labels` labels
of the pages the crawler asks about first (`storage.uncertain_pages`) and as many of
pages drawn at random, each label the truth's answer (relevant at `--threshold`).
Two figures for each:

- F1 of "relevant" (the crawl's relevance at its threshold against the truth's) over
  the stored pages no copy labelled, each scored again from its stored main text by
  the crawl's scorer, having learned the copy's labels;
- the crawl continued on each copy for `--next` pages: their harvest (the share the
  truth calls relevant) and the F1 of the relevance the crawl gave them.

    python -m bench labels --truth /tmp/realweb/truth/sparse --truth /tmp/realweb/truth/git
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import tempfile
from pathlib import Path

import numpy as np
from prometheus_client import CollectorRegistry
from sqlalchemy import text

import crawler
import storage
from crawler.config import defaults
from crawler.engine.checkpoints import SCORER_STATE
from crawler.engine.labels import LabelWatch
from crawler.reporting.ground_truth import read_relevance
from crawler.telemetry.metrics import CrawlerMetrics
from policies import TopicScorer

ARMS = ("none", "uncertain", "random")
Args = argparse.Namespace
FAST = {"allow_private_networks": True, "delay": 0.0, "concurrency": 16, "metrics_port": 0}
FAST |= {"per_host_concurrency": 16}
RELEVANT = defaults.RELEVANCE_THRESHOLD  # the crawl's relevance threshold


def parse_args() -> Args:
    parser = argparse.ArgumentParser(prog="python -m bench labels", description=__doc__)
    parser.add_argument("--truth", type=Path, action="append", required=True)
    parser.add_argument("--pages", type=int, default=2000, help="the first crawl's pages")
    parser.add_argument("--next", type=int, default=1000, help="pages crawled after labels")
    parser.add_argument("--labels", type=int, default=20)
    parser.add_argument("--threshold", type=float, default=0.15, help="the truth's")
    parser.add_argument("--seed", type=int, default=0, help="of the random labels")
    parser.add_argument("--work", type=Path, help="where the crawls go (default: a temp dir)")
    return parser.parse_args()


def f1(said: np.ndarray, truly: np.ndarray) -> float:
    both = int(np.sum(said & truly))
    return 2 * both / max(1, int(said.sum()) + int(truly.sum()))


async def stored_pages(db: str) -> dict[int, tuple[str, float]]:
    """(URL, relevance) of each page stored with its text, by id."""
    engine = storage.open_engine(db)
    try:
        async with engine.connect() as connection:
            rows = await connection.execute(
                text(
                    "SELECT u.id, u.url, u.relevance FROM urls AS u "
                    "JOIN page_texts AS p ON p.url_id = u.id WHERE u.relevance IS NOT NULL"
                )
            )
            return {url_id: (url, relevance) for url_id, url, relevance in rows.all()}
    finally:
        await engine.dispose()


async def label(
    db: Path, arm: str, pages: dict[int, tuple[str, float]], truth: dict[str, float], args: Args
) -> None:
    """Label `args.labels` pages as the truth answers: those asked about, or at random."""
    engine = storage.open_engine(str(db))
    try:
        if arm == "uncertain":
            ids = [page.url_id for page in await storage.uncertain_pages(engine, args.labels)]
        else:
            ids = random.Random(args.seed).sample(sorted(pages), args.labels)
        for url_id in ids:
            await storage.save_label(engine, url_id, truth[pages[url_id][0]] >= args.threshold)
    finally:
        await engine.dispose()


async def rescored(db: str, topic: str, held_out: list[int]) -> np.ndarray:
    """The held-out pages' relevance from their stored main text, by the crawl's scorer
    having learned the database's labels."""
    engine = storage.open_engine(db)
    try:
        async with engine.connect() as connection:
            state = await storage.load_learned_state(connection, SCORER_STATE)
        scorer = TopicScorer().fit([topic])
        if state is not None:
            scorer.set_state(state)
        metrics = CrawlerMetrics(CollectorRegistry(), version="bench")
        await LabelWatch(
            db=engine, scorer=scorer, relevance_threshold=RELEVANT, metrics=metrics
        ).refresh()
        texts = await storage.labelled_texts(engine, held_out)
    finally:
        await engine.dispose()
    return np.array([scorer.score([texts[url_id]])[0] for url_id in held_out])


async def topic_figures(directory: Path, work: Path, args: Args) -> None:
    truth = read_relevance(directory / "pages.tsv")
    topic = (directory / "topic.txt").read_text().strip()
    seeds = (directory / "seeds.txt").read_text().split()
    base = work / f"{directory.name}.db"
    await crawler.crawl(seeds, topic, db=str(base), max_pages=args.pages, **FAST)
    pages = await stored_pages(str(base))
    pages = {url_id: page for url_id, page in pages.items() if page[0] in truth}
    copies = {arm: work / f"{directory.name}-{arm}.db" for arm in ARMS}
    for arm, copy in copies.items():
        shutil.copy(base, copy)
        if arm != "none":
            await label(copy, arm, pages, truth, args)
    labels = {arm: await load(copy) for arm, copy in copies.items()}
    held_out = sorted(set(pages) - {label.url_id for arm in ARMS for label in labels[arm]})
    truly = np.array([truth[pages[url_id][0]] >= args.threshold for url_id in held_out])
    crawls = np.array([pages[url_id][1] for url_id in held_out]) >= RELEVANT
    print(
        f"{directory.name} ({topic!r}): {len(pages)} pages crawled; of the {len(held_out)} "
        f"no copy labelled {int(truly.sum())} truly relevant, F1 as crawled {f1(crawls, truly):.3f}"
    )
    print(
        f"  {'labels':<10} {'relevant':>8} {'F1 held out':>12} {'harvest next':>13} {'F1 next':>8}"
    )
    for arm, copy in copies.items():
        scores = await rescored(str(copy), topic, held_out)
        later: list[crawler.Page] = []
        await crawler.crawl(
            seeds, topic, db=str(copy), max_pages=args.next, on_page=later.append, **FAST
        )
        known = [page for page in later if page.url in truth]
        next_truly = np.array([truth[page.url] >= args.threshold for page in known])
        next_said = np.array([(page.relevance or 0.0) >= RELEVANT for page in known])
        answers = f"{sum(label.relevant for label in labels[arm])} of {len(labels[arm])}"
        print(
            f"  {arm:<10} {answers:>8} {f1(scores >= RELEVANT, truly):>12.3f} "
            f"{next_truly.mean():>13.3f} {f1(next_said, next_truly):>8.3f}"
        )


async def load(db: Path) -> list[storage.Label]:
    engine = storage.open_engine(str(db))
    try:
        return await storage.load_labels(engine)
    finally:
        await engine.dispose()


async def main() -> None:
    args = parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        work = args.work or Path(scratch)
        work.mkdir(parents=True, exist_ok=True)
        for directory in args.truth:
            await topic_figures(directory, work, args)


if __name__ == "__main__":
    asyncio.run(main())
