"""The Q-learning frontier's cost per fetch with a large queue: the time `on_fetched`
takes (learning, describing the new links, re-ranking a share of the queue) and the
time a full re-ranking would take, with a trained model. The queue is filled as a crawl
fills it, each fetched page taken from the frontier (whose running value, the subsidy,
keeps eq. (10)'s targets bounded), with scores in the reward's range.

    python bench/rerank_cost.py [--queued 100000] [--fetches 500] [--hosts 20]
        [--relative-levels 2]

`--relative-levels` 0 measures the frontier without the raise of a relevant page's
relatives (the default's 2 records each fetch's new links for it, `LinkFamilies`).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from policies import Candidate, LinkContext
from policies.qlearning import QLearningFrontier

WORDS = [f"word{i}" for i in range(2_000)]


def reward(candidate: Candidate) -> float:
    """A relevance the words predict: the share of topic words (the first 200) among a
    link's (its URL's path, the words around it), so the model learns and re-ranks."""
    found = candidate.url.split("/", 3)[3].split("/")
    return 0.1 * sum(int(word[4:]) < 200 for word in found) / len(found)


def link(rng: np.random.Generator, url_id: int, hosts: int) -> Candidate:
    words = " ".join(rng.choice(WORDS, size=6))
    host = f"h{rng.integers(hosts)}"
    context = LinkContext(anchor=words[:30], around=words, parent_title=words[-20:])
    return Candidate(
        url_id,
        f"http://{host}/{words.replace(' ', '/')}",
        host,
        3,
        0.1 * float(rng.random()),
        context=context,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--queued", type=int, default=100_000)
    parser.add_argument("--fetches", type=int, default=500)
    parser.add_argument("--hosts", type=int, default=20, help="the queue's URLs spread over")
    parser.add_argument("--relative-levels", type=int, default=2)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    frontier = QLearningFrontier(relative_levels=args.relative_levels)
    url_id = 0
    frontier.push(link(rng, 0, args.hosts))
    skills = []
    while len(frontier) < args.queued:  # pages of 30 links, learned from as they come
        parent = frontier.pop(lambda host: True)
        assert parent is not None
        children = [link(rng, url_id + i + 1, args.hosts) for i in range(30)]
        url_id += 30
        frontier.on_fetched(parent, reward(parent), children)
        for child in children:
            frontier.push(child)
    seconds = []
    for _ in range(args.fetches):
        popped = frontier.pop(lambda host: True)
        assert popped is not None
        children = [link(rng, url_id + i + 1, args.hosts) for i in range(30)]
        url_id += 30
        started = time.perf_counter()
        frontier.on_fetched(popped, reward(popped), children)
        seconds.append(time.perf_counter() - started)
        skills.append(frontier.model.skill())
        for child in children:
            frontier.push(child)
    started = time.perf_counter()
    frontier.reprioritize()
    full = time.perf_counter() - started
    print(
        f"queued {len(frontier):,}, skill {min(skills):.3f} to {max(skills):.3f} "
        f"({np.mean(np.array(skills) > 0):.0%} of fetches skilled): on_fetched median "
        f"{1e3 * statistics.median(seconds):.2f} ms, mean {1e3 * statistics.mean(seconds):.2f} ms, "
        f"99th percentile "
        f"{1e3 * float(np.percentile(seconds, 99)):.2f} ms; a full re-ranking {1e3 * full:.0f} ms"
    )


if __name__ == "__main__":
    main()
