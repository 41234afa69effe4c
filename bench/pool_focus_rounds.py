"""The crawls of several rounds of `bench/focus_ablations.py` pooled, topic by topic:
each policy's median recall over all its crawls, and where it is behind or ahead of
best-first's beyond what chance gives.

A median of three or five crawls moves from round to round, best-first's too, so one
round's medians say "behind" where the policy is no more behind than best-first is
behind itself (`best-first-again`). Pooled, a policy's recall at a cutoff is said to be
behind best-first's where a one-sided Mann-Whitney U test over the two sets of crawls
gives p < 0.05: its crawls rank below best-first's more often than two samples of one
order would. At that level, some 5% of the cutoffs of a policy no different from
best-first are flagged all the same: the control's line shows how many. Three crawls
of each are too few to tell (without ties the least p is 0.05): pool five or more.
Each printout is a round; best-first's medians shown are over all its crawls, and each
policy is compared with best-first's crawls of the rounds it ran in.

    for truth in /tmp/realweb/truth/* /tmp/realweb/truth2/*; do
        python bench/focus_ablations.py --ground-truth $truth --repeat 5 \
            --variants best-first-again qlearning >> round-1.txt
    done
    python bench/pool_focus_rounds.py round-*.txt
"""

from __future__ import annotations

import argparse
import re
import statistics
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from scipy.stats import mannwhitneyu

BASELINE = "best-first"
SIGNIFICANT = 0.05
RUN = re.compile(r"run \d+ (\S+): (.*)")
RECALL = re.compile(r"recall@(\d+)=([\d.]+)")


@dataclass(frozen=True)
class Crawl:
    round: int  # the printout it came from
    topic: str  # its ground truth's name
    policy: str
    recall: dict[int, float]  # by cutoff


def read_rounds(texts: list[str]) -> list[Crawl]:
    """Every crawl printed by the focus script, one printout a round, under the ground
    truth it crawled."""
    crawls = []
    for round_, text in enumerate(texts):
        topic = None
        for line in text.splitlines():
            if line.startswith("ground truth "):
                topic = line.removeprefix("ground truth ").strip()
                continue
            match = RUN.match(line)
            if match is None:
                continue
            if topic is None:
                raise ValueError(f"a crawl printed before any ground truth was named: {line!r}")
            recall = {int(cutoff): float(value) for cutoff, value in RECALL.findall(line)}
            policy = match.group(1).removeprefix("ablation-")
            crawls.append(Crawl(round_, topic, policy, recall))
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
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("outputs", nargs="+", type=Path, help="the focus script's printouts")
    args = parser.parse_args()
    try:
        crawls = read_rounds([path.read_text() for path in args.outputs])
    except (OSError, ValueError) as error:
        parser.error(str(error))
    print("\n".join(report(crawls)))


if __name__ == "__main__":
    main()
