"""How TF-IDF relevance to a short topic relates to the testbed's true relevance.

Scores every page of a testbed web against the topic, learning document frequencies
as a crawl would, and reports the spread of scores by kind of page and the precision
and recall of each threshold against "truly relevant" (true relevance >= 0.4).

    python bench/relevance.py [--pages 3000] [--topic "solar energy"]
"""

from __future__ import annotations

import argparse

import numpy as np

from crawler.pipeline.parse import analyze
from policies import TopicScorer
from policies.relevance import Rows
from testbed.web import BROKEN, HUB, OFF_TOPIC, ON_TOPIC, TestbedWeb, WebSpec

TRULY_RELEVANT = 0.4


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pages", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--topic", default="solar energy")
    args = parser.parse_args()
    web = TestbedWeb(WebSpec(pages=args.pages, seed=args.seed))
    scorer = TopicScorer().fit([args.topic])
    pages = [p for p in range(args.pages) if web.kind[p] != BROKEN]
    counts = []
    for page in pages:
        html = web.render(page, lambda p: f"http://h/p/{p}", lambda s, t: f"http://h/r/{t}")
        analysis = analyze(
            html.encode(),
            url=f"http://h/p/{page}",
            charset="utf-8",
            x_robots_tag=None,
            counter=scorer.counter_.hasher,
        )
        page_counts = Rows.of(analysis.counts, 0, 1)
        scorer.partial_fit_counts(page_counts)
        counts.append(page_counts)
    scores = np.array([scorer.score_counts(c)[0] for c in counts])
    kinds = web.kind[pages]
    truth = web.relevance[pages] >= TRULY_RELEVANT
    print(f"topic {args.topic!r}, {len(pages)} pages; score percentiles 5/25/50/75/95:")
    for kind, name in ((ON_TOPIC, "on-topic"), (HUB, "hubs"), (OFF_TOPIC, "off-topic")):
        spread = np.percentile(scores[kinds == kind], [5, 25, 50, 75, 95])
        print(f"  {name:10} " + " ".join(f"{value:.3f}" for value in spread))
    print("threshold  precision  recall")
    for threshold in (0.05, 0.1, 0.15, 0.2):
        chosen = scores >= threshold
        precision = (chosen & truth).sum() / max(chosen.sum(), 1)
        print(f"  {threshold:7.2f}  {precision:9.2f}  {(chosen & truth).sum() / truth.sum():6.2f}")


if __name__ == "__main__":
    main()
