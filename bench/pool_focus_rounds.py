"""The crawls of several rounds of `python -m bench focus --json` pooled, topic by
topic: each policy's median recall over all its crawls, and where it is behind or ahead
of best-first's beyond what chance gives.

A median of three or five crawls moves from round to round, best-first's too, so one
round's medians can say "behind" where a policy is no more behind than best-first is
behind itself. Pooled, a policy's recall at a cutoff is said to be behind best-first's
where a one-sided Mann-Whitney U test over the two sets of crawls gives p < 0.05: its
crawls rank below best-first's more often than two samples of one order would. At that
level some 5% of the cutoffs of a policy no different from best-first are flagged all
the same. Three crawls of each are too few to tell (without ties the least p is 0.05):
pool five or more. Each file is a round of one topic; a policy is compared with
best-first's crawls of the rounds it ran in.

    for round in 1 2; do for truth in /tmp/realweb/truth/*; do
        python -m bench focus --ground-truth $truth --repeat 5 --budget 1000 \
            --per-host-concurrency 4 --policies best-first qlearning --json \
            > rounds/$round-$(basename $truth).json
    done; done
    python -m bench rounds rounds/*.json
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from scipy.stats import mannwhitneyu

BASELINE = "best-first"
SIGNIFICANT = 0.05


@dataclass(frozen=True)
class Crawl:
    round: int  # the printout it came from
    topic: str  # its ground truth's name
    policy: str
    recall: dict[int, float]  # by cutoff


def read_rounds(texts: list[str]) -> list[Crawl]:
    """Every crawl of the focus benchmark's JSON outputs, one output a round, under its
    ground truth's topic."""
    crawls = []
    for round_, text in enumerate(texts):
        output = json.loads(text)
        for policy, runs in output["runs"].items():
            for run in runs:
                recall = {
                    int(key.removeprefix("recall@")): float(value)
                    for key, value in run.items()
                    if key.startswith("recall@")
                }
                crawls.append(Crawl(round_, output["topic"], policy, recall))
    return crawls


def recalls(
    crawls: list[Crawl], topic: str, policy: str, rounds: set[int] | None = None
) -> dict[int, list[float]]:
    """Each cutoff's recalls of `policy`'s crawls of `topic` (in `rounds` only)."""
    by_cutoff: dict[int, list[float]] = defaultdict(list)
    for crawl in crawls:
        mine = crawl.topic == topic and crawl.policy == policy
        if mine and (rounds is None or crawl.round in rounds):
            for cutoff, value in crawl.recall.items():
                by_cutoff[cutoff].append(value)
    return by_cutoff


def compare(crawls: list[Crawl], policy: str) -> dict[str, list[str]]:
    """The topic@cutoff where `policy`'s median recall is below best-first's, and where
    its crawls rank below or above best-first's beyond chance: against best-first's
    crawls of the same rounds, so that a round's machine and day weigh on both."""
    found: dict[str, list[str]] = {"median behind": [], "behind": [], "ahead": []}
    for topic in dict.fromkeys(crawl.topic for crawl in crawls):
        rounds = {c.round for c in crawls if c.topic == topic and c.policy == policy}
        mine, baseline = recalls(crawls, topic, policy), recalls(crawls, topic, BASELINE, rounds)
        for cutoff, values in mine.items():
            if not baseline.get(cutoff):
                continue
            where = f"{topic}@{cutoff}"
            if statistics.median(values) < statistics.median(baseline[cutoff]):
                found["median behind"].append(where)
            for side, alternative in (("behind", "less"), ("ahead", "greater")):
                test = mannwhitneyu(values, baseline[cutoff], alternative=alternative)
                if test.pvalue < SIGNIFICANT:
                    found[side].append(where)
    return found


def report(crawls: list[Crawl]) -> list[str]:
    policies = list(dict.fromkeys(crawl.policy for crawl in crawls))
    lines: list[str] = []
    summed: dict[str, dict[int, float]] = {policy: defaultdict(float) for policy in policies}
    for topic in dict.fromkeys(crawl.topic for crawl in crawls):
        for policy in policies:
            by_cutoff = recalls(crawls, topic, policy)
            if not by_cutoff:
                continue
            medians = {cutoff: statistics.median(values) for cutoff, values in by_cutoff.items()}
            for cutoff, median in medians.items():
                summed[policy][cutoff] += median
            crawled = max(len(values) for values in by_cutoff.values())
            shown = " / ".join(f"{median:.3f}" for median in medians.values())
            lines.append(f"{topic:<12} {policy:<28} {crawled:>3} crawls  {shown}")
    lines.append("")
    for policy in policies:
        shown = " / ".join(f"{total:.2f}" for total in summed[policy].values())
        lines.append(f"{policy}: summed medians {shown}")
        if policy != BASELINE:
            for kind, where in compare(crawls, policy).items():
                lines.append(f"  {kind}: {', '.join(where) or 'nowhere'}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("outputs", nargs="+", type=Path, help="the focus benchmark's JSON")
    args = parser.parse_args()
    try:
        crawls = read_rounds([path.read_text() for path in args.outputs])
    except (OSError, ValueError, KeyError) as error:
        parser.error(str(error))
    print("\n".join(report(crawls)))


if __name__ == "__main__":
    main()
