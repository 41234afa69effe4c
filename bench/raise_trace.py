"""Where the Q-learning frontier's raise of a relevant page's relatives goes, in one live
crawl of a ground-truth web: the families it raised, what their raised pages earned by
the ground truth and how many new links they revealed, and when a family was lowered
again.

    python bench/raise_trace.py --ground-truth /tmp/realweb2/truth/mvcc \
        [--levels 2] [--lowered-after 30] [--kept-by-leading-on] [--budget 1000] \
        [--per-host-concurrency 4]

A family is the new links one fetch revealed (`policies/link_families.py`), named by
that fetch's page. For each family raised it prints the fetch at which it was first
raised, its links moved up, how many of them the crawl then fetched, how many of those
revealed new links and how many new links they revealed on average, how many were
relevant by the ground truth and how many by the crawl's own score, the longest run of
them in a row that did neither (the frontier's miss, with the ground truth's
relevance), the fetches at which it was first and last lowered, if it was, and how many
times (a relevant page raises a lowered family again).
Without --lowered-after a raised family is never lowered (the frontier's raise as
`relatives-raised-deferred` runs it in `bench/focus_ablations.py`); with
--kept-by-leading-on only a raised page that reveals a new link starts its family's
misses again (`relatives_kept_by_relevance` False, `raise-kept-by-leading-on`).
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from crawler.experiments import CrawlSettings, TruthWeb, check_served, crawl_order, focus
from policies import Candidate, register_frontier_policy
from policies.qlearning import QLearningFrontier

POLICY = "raise-traced"


@dataclass
class Family:
    raised_at: int  # the fetch at which a relevant page first raised it
    raised: set[int] = field(default_factory=set)  # its links moved up
    fetched: list[tuple[str, int]] = field(default_factory=list)  # (URL, new links revealed)
    scored_relevant: int = 0  # fetched pages at the crawl's own threshold (`relevant_at`)
    lowered: list[int] = field(default_factory=list)  # the fetches at which it was lowered

    def longest_miss(self, relevant: Callable[[str], bool]) -> int:
        """The most raised pages fetched in a row that revealed no new link and were not
        relevant."""
        longest = run = 0
        for url, revealed in self.fetched:
            run = 0 if revealed or relevant(url) else run + 1
            longest = max(longest, run)
        return longest


class TracedRaise(QLearningFrontier):
    """The frontier's raise, recording each family it moves and what its pages did."""

    def __init__(self, **settings) -> None:  # type: ignore[no-untyped-def]
        super().__init__(**settings)
        self.fetches = 0
        self.urls: dict[int, str] = {}
        self.traced: dict[int, Family] = {}  # by the revealer's id

    def push(self, candidate: Candidate) -> None:
        self.urls[candidate.url_id] = candidate.url
        super().push(candidate)

    def push_many(self, candidates: Sequence[Candidate]) -> None:
        self.urls.update((candidate.url_id, candidate.url) for candidate in candidates)
        super().push_many(candidates)

    def on_fetched(
        self, candidate: Candidate, relevance: float, children: Sequence[Candidate]
    ) -> None:
        self.fetches += 1
        revealer = self.families.revealer_of(candidate.url_id)
        family = self.traced.get(revealer) if revealer is not None else None
        if family is not None and candidate.url_id in family.raised:
            family.fetched.append((candidate.url, len(children)))
            family.scored_relevant += self.is_relevant(relevance)
        super().on_fetched(candidate, relevance, children)

    def _raise_relatives(self, url_id: int, relevance: float) -> None:
        levels = list(self.families.relatives(url_id, levels=self.relative_levels))
        before = {link: self.queued_score(link) for _, links in levels for link in links.tolist()}
        super()._raise_relatives(url_id, relevance)
        for link, score in before.items():
            if score is not None and self.queued_score(link) != score:
                revealer = self.families.revealer_of(link)
                assert revealer is not None
                family = self.traced.setdefault(revealer, Family(self.fetches))
                family.raised.add(link)

    def rescore(self, url_id: int, score: float) -> bool:
        queued = self.queued_score(url_id)
        moved = super().rescore(url_id, score)
        revealer = self.families.revealer_of(url_id)
        if moved and queued is not None and score < queued and revealer in self.traced:
            lowered = self.traced[revealer].lowered
            if not lowered or lowered[-1] != self.fetches:  # one lowering moves many links
                lowered.append(self.fetches)
        return moved


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ground-truth", type=Path, required=True)
    parser.add_argument("--truth-threshold", type=float)
    parser.add_argument("--levels", type=int, default=2, choices=[1, 2])
    parser.add_argument("--lowered-after", type=int)
    parser.add_argument("--kept-by-leading-on", action="store_true")
    parser.add_argument("--budget", type=int, default=1000)
    parser.add_argument("--per-host-concurrency", type=int, default=4)
    args = parser.parse_args()
    made: list[TracedRaise] = []

    def traced(**settings) -> TracedRaise:  # type: ignore[no-untyped-def]
        made.append(
            TracedRaise(
                relative_levels=args.levels,
                relatives_lowered_after=args.lowered_after,
                relatives_kept_by_relevance=not args.kept_by_leading_on,
                **settings,
            )
        )
        return made[-1]

    register_frontier_policy(POLICY, traced)
    web = TruthWeb.read(args.ground_truth, args.truth_threshold)
    await check_served(web)
    settings = CrawlSettings(args.budget, per_host_concurrency=args.per_host_concurrency)
    with tempfile.TemporaryDirectory(prefix="raise-trace-") as scratch:
        order = await crawl_order(web, POLICY, settings, Path(scratch))
    report = focus(web.truth_of(order, args.budget), web, args.budget)
    print(" ".join(f"{k}={v:.3f}" for k, v in report.items() if k.startswith(("recall", "pages"))))
    frontier = made[-1]
    print(
        "family\traised at\traised\tfetched\tleading on\tnew links a page\trelevant"
        "\trelevant by its score"
        "\tlongest miss\tfirst lowered at\tlast lowered at\tlowerings"
    )

    def relevant(url: str) -> bool:
        return web.relevance.get(url, 0.0) >= web.threshold

    for revealer, family in sorted(frontier.traced.items(), key=lambda item: item[1].raised_at):
        revealed = [links for _, links in family.fetched]
        found = sum(relevant(url) for url, _ in family.fetched)
        mean = sum(revealed) / len(revealed) if revealed else 0.0
        print(
            f"{frontier.urls.get(revealer, revealer)}\t{family.raised_at}\t{len(family.raised)}"
            f"\t{len(revealed)}\t{sum(n > 0 for n in revealed)}\t{mean:.1f}\t{found}"
            f"\t{family.scored_relevant}"
            f"\t{family.longest_miss(relevant)}"
            f"\t{family.lowered[0] if family.lowered else '-'}"
            f"\t{family.lowered[-1] if family.lowered else '-'}\t{len(family.lowered)}"
        )


if __name__ == "__main__":
    asyncio.run(main())
