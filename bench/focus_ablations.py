"""Which part of the Q-learning frontier drives its order on a ground-truth web: live
crawls of variants with one part taken out, and where each crawl spent its pages.

    python bench/focus_ablations.py --ground-truth /tmp/realweb/truth/memory \
        [--budget 1000] [--repeat 3] [--per-host-concurrency 4]

Variants: `qlearning` as it is; `untrained` (never learns: best-first's order through
the same code); `confident` (the correction taken at full weight, no confidence
shrinkage); `immediate` (gamma 0: the reward alone, no revealed children); `no-words`
(the link described by its host, depth and parent's relevance only); `impatient`
(patience 0: every slot filled); `waits-untried` (a host barely tried may wait too);
`unsectioned` (the sections of a host not valued, a host by its pages' mean reward and
its optimism); `hosts-mean-unskilled` (a host's mean reward counted too, weighed by one
less the sections' skill); `surprise` (a section valued by what its pages earned beyond their links'
estimates, not by their rewards); `surprise-fitted` (beyond the reward a least-squares
line over the crawl's fetches expects of their estimates); `sections-prior-20` (a
section's mean reward shrunk by n / (n + 20), not n / (n + 5)); `sections-ramped` (a
section's mean reward weighed in by n / (n + 100) after n fetches of the crawl);
`sections-recent` (a section's mean over its recent fetches, each weighing 0.9 of the
next); `sections-weighed` (a section's mean weighed by what it says of the reward beyond
the link's estimate: least squares over the crawl's fetches, from 30 on);
`sections-scaled` (a section's mean scaled by its head's own index over the mean score
of the links fetched there, at most 1); `sections-mean-only` and `sections-optimism-only`
(a section valued by its mean reward alone, or by its optimism alone);
`sections-harvest` and `sections-harvest-0.3` (a section valued by the share of its
pages at the crawl's relevance threshold, 0.1, weighed 0.5 or 0.3, not by their mean
relevance); `shared-optimism` (a host's optimism shared among its sections: each
section's over the square root of its host's sections seen); `empirical-optimism`
(optimism on the scale of the sections' values found: the 90th percentile of those
fetched 3 times or more, between 0.01 and 0.1); `gated-sections` (a host's sections
valued only once its mean reward is above the crawl's by more than two standard errors);
`capped-optimism`, `capped-optimism-5` and `capped-optimism-20` (a host's and a
section's optimism for their first 10, 5 or 20 tries only); `ungated-sections` (the
sections' values at full weight from the start, not weighed by their skill: the
variants from `surprise` to `capped-optimism-20` and `sections-recent`,
`sections-weighed` and `sections-scaled` value the sections at full weight too, as they
were measured);
`skill-by-ranking` (the link model's skill by how much better its correction orders the
last 400 links' targets than the score alone, Kendall's tau, not by the squared error);
`ridge` (the correction solved anew after each batch by ridge regression over the last
2,000 links learned, not stepped by stochastic gradient), `ridge-by-ranking` (and the
skill by ranking), `ridge-confident` (and its correction at full weight);
`skill-by-targets` (weighed by a skill measured against the link model's calibration
to eq. (10)'s targets instead of the reward); `hosts-carry-mean` (a host's mean reward
weighed 3 times one less the sections' skill, the share the sections do not carry),
`hosts-carry-mean-1` (weighed 1), `hosts-carry-mean-capped` (and a host's optimism for
its first 10 tries only), `hosts-capped` (that cap alone), `hosts-carry-recent` (the
host's running reward over its recent fetches, patience's, in place of its mean);
`skill-tested` (the sections' skill only once their errors are significantly below the
links': Diebold and Mariano's test, z of 2); `optimism-0.03` (the hosts' and sections'
optimism 0.03, not 0.1); `unbudgeted` (the optimism and patience from the first page,
with no exploration budget); `optimism-ramped-50` and `optimism-ramped-200` (no budget;
the hosts' and sections' optimism weighed in by n / (n + 50 or 200) after n fetches),
`optimism-ramped-200-impatient` (and patience 0); `budget-0.5`, `budget-0.3` and
`budget-0` (the budget's alpha 0.5, 0.3 or 0, not 0.1); `warmup-10` and `warmup-50`
(exploring from the 10th or 50th page taken in best-first's order, not the 100th);
`warmup-uncorrected` (the link model's and the sections' corrections held at zero too
until the warmup's pages are in); `budget-patient` (patience whatever the budget, for
any host whose pages earned more than the crawl's); `patient-while-exploring` (patience
only while the budget affords exploring);
`rerank-whole-hosts` (after a batch learned, each host chosen re-ranked whole, not a
slice of `rerank_budget` URLs of one that holds more); `rerank-4000` (a
`rerank_budget` of 4,000 URLs a batch, not 1,000);
`patient-exploiting` (patience only while the budget does not afford exploring, after
the warmup); `optimism-by-mean` and
`hosts-optimism-by-mean` (the sections' and hosts', or the hosts' optimism alone, also
bounded as a variance-aware bound is: sqrt(2 m c / (1 + n)) + c / (1 + n) for a mean m
of the arm's rewards, optimism c and n tries); `predicted-baseline` (the budget's
baseline predicted at each page taken from the best score queued, scaled by what
best-first's choices earned against it); `baseline-running-mean` (the budget's
baseline counted at its rate, the running mean of the pages taken not exploring, on
those pages too, not at their own rewards; alpha 0.3) and `baseline-running-mean-0.1`
(alpha 0.1); `baseline-choice` (while the budget affords
exploring, each pop first finds best-first's choice and puts it back: best-first's own
pages, taken while exploring, count as the baseline's); `explores-poor-slots` (and
best-first's choice is taken when it ranks at least `patience` times the best link
queued, the optimism's choice otherwise); `sections-by-directory` and
`sections-two-segments` (a host's sections by the directory of a URL's path, or its
first two segments, not its first segment); `sections-by-directory-pooled` (sections by
directory, each one's mean reward shrunk towards that of its first segment's pages, not
towards zero, and its optimism its first segment's); `ungated-section-optimism` (a
section's optimism at full weight while the budget affords exploring, only its mean
reward weighed by the sections' skill); `children-backed-up` (a fetched link learned
again, towards its reward plus gamma times its revealed page's, whenever a page it
revealed is fetched and earns more than its others did); `relatives-raised` (a page
at the crawler's relevance threshold raises the queued pages found with it to at least
gamma times its relevance's share of a link's estimate, and those found with its
discoverer to gamma squared times it), `relatives-raised-after-warmup` (and nothing
raised while the budget's warmup pages come in), `siblings-raised` (the pages found
with it only, from the first page on), all three never lowered; `unraised` (no raise:
`relative_levels` 0); `relatives-raised-deferred` and `siblings-raised-deferred` (the
frontier's own raise, at two levels and at one, never lowered: it holds the warmup's
relevant pages back and raises their relatives once the warmup ends);
`relatives-raised-while-paying` and `siblings-raised-while-paying` (that raise, lowered
again for a family once ten of its raised pages in a row were fetched to no relevant
page and no new link, not thirty as the frontier's own); `raise-kept-by-leading-on`
(the frontier's own raise and lowering, but a raised page at the threshold does not
start its family's misses again: only one that reveals a new link does, and a relevant
one raises the family again until its next miss); `poor-hosts-unoptimistic` (no
optimism for a host tried 30 times or more whose pages earned less than half the
crawl's mean reward); `budget-by-harvest` (the exploration budget counted in pages
at the crawl's relevance threshold, 0.1, not in their relevance); `host-optimism-scaled`
(a host's optimism three times the crawl's mean reward, at most the frontier's 0.1);
`hosts-calibrated` (a host's head scaled, when hosts compete, by what its pages earned
against what their links promised, relative to the crawl's, between 1/4 and 4); and
`best-first-again`, best-first itself, crawled in its own turn of each run: how far two
crawls of one order fall apart.
Each variant is qlearning as it is, its exploration budget included, but for the part it
names. Each run crawls best-first and the variants in turn, starting one further along
than the run before (`crawler.experiments.rotated`).
For each crawl it prints recall within the first N pages, the pages fetched of each
host holding relevant pages, and the model's skill, its largest correction, the
sections' skill and the weight of their mean reward at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import heapq
import math
import statistics
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import scipy.sparse
from sklearn.linear_model import Ridge

from crawler.experiments import CrawlSettings, TruthWeb, check_served, crawl_order, focus, rotated
from policies import BestFirst, Candidate, PriorityFrontier, register_frontier_policy
from policies.exploration_budget import ExplorationBudget
from policies.frontier import HEADS_SLACK
from policies.link_model import LinkContextModel, Row, _concatenated
from policies.qlearning import LearningSettings, QLearningFrontier
from policies.site_values import SectionSkill, SiteValues, section_of

MADE: dict[str, PriorityFrontier] = {}


class _NoWords(QLearningFrontier):
    def _describe(self, links, parent_relevance=None):  # type: ignore[no-untyped-def]
        bare = [
            Candidate(c.url_id, "", c.host, c.depth, c.score, parent_relevance=c.parent_relevance)
            for c in links
        ]
        return super()._describe(bare, parent_relevance)


class _Confident(LinkContextModel):
    def confidence(self, indices, lengths):  # type: ignore[no-untyped-def]
        return np.ones(len(lengths))

    def skill(self) -> float:
        return 1.0 if self.updates_ else 0.0


class _RankingSkill(LinkContextModel):
    """The skill measured by ranking, not by squared error: over the last `judged` links
    learned, each judged before it was learned from, how much better the score plus the
    correction orders their targets than the score alone does (Kendall's tau of each
    with the targets, the gain over what the score leaves: (tau_full - tau_score) /
    (1 - tau_score), at zero or above), shrunk as the squared error's skill is."""

    def __init__(self, judged: int = 400, **kw) -> None:  # type: ignore[no-untyped-def]
        super().__init__(**kw)
        self.judged = judged
        self._judged: list[tuple[float, float, float]] = []
        self._ranking_skill = 0.0

    def update(self, row, score, target):  # type: ignore[no-untyped-def]
        indices, values = row
        correction = float(values @ self.weights_[indices])
        self._judged.append((score, score + correction, target))
        del self._judged[: -self.judged]
        super().update(row, score, target)

    def refit(self) -> bool:
        fitted = super().refit()
        if fitted and len(self._judged) >= 30:
            score, full, target = np.array(self._judged).T
            tau_score, tau_full = _tau(score, target), _tau(full, target)
            gain = (tau_full - tau_score) / max(1.0 - tau_score, 1e-9)
            self._ranking_skill = min(max(gain, 0.0), 1.0)
        return fitted

    def skill(self) -> float:
        shrink = self.updates_ / (self.updates_ + self.warmup)
        return shrink * self._ranking_skill


class _RidgeRefit(LinkContextModel):
    """The correction solved anew after each batch: ridge regression (scikit-learn's
    `Ridge`, no intercept) over the last `window` links learned and their residual
    targets, in place of the stochastic gradient's steps."""

    def __init__(self, window: int = 2_000, alpha: float = 1.0, **kw) -> None:  # type: ignore[no-untyped-def]
        super().__init__(**kw)
        self.window, self.alpha = window, alpha
        self._seen: list[tuple[tuple[np.ndarray, np.ndarray], float]] = []

    def refit(self) -> bool:
        if not self._pending:
            return False
        self._seen.extend(self._pending)
        del self._seen[: -self.window]
        self._pending = []
        indices, values, lengths = _concatenated([row for row, _ in self._seen])
        matrix = scipy.sparse.csr_matrix(
            (values, indices, np.concatenate([[0], np.cumsum(lengths)])),
            shape=(len(self._seen), self.n_features),
        )
        targets = np.array([target for _, target in self._seen])
        fit = Ridge(alpha=self.alpha, fit_intercept=False, solver="sparse_cg").fit(matrix, targets)
        self.weights_ = np.asarray(fit.coef_, dtype=np.float64)
        self.refits_ += 1
        return True


class _RidgeConfident(_RidgeRefit, _Confident):
    """The ridge's correction at full weight."""


class _RidgeRanked(_RankingSkill, _RidgeRefit):
    """The ridge's correction, its skill by ranking (`_RankingSkill.refit` judges after
    the ridge's refit)."""


def _tau(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall's tau-a of two arrays: the concordant pairs' share less the discordant's."""
    n = len(x)
    concordance = np.sign(x[:, None] - x[None, :]) * np.sign(y[:, None] - y[None, :])
    return float(concordance.sum() / (n * (n - 1)))


class _Untrained(LinkContextModel):
    def update(self, row, score, target):  # type: ignore[no-untyped-def]
        pass


class _SurprisedSections(SiteValues):
    """Sections valued by what their pages earned beyond what their links promised:
    the score, or (`fitted`) the reward a least-squares line over the crawl's earlier
    fetches expects of it; a seed's score is the user's choice and promises nothing."""

    def __init__(self, fitted: bool) -> None:
        super().__init__()
        self.fitted, self.promised = fitted, 0.0
        self._sums = np.zeros(5)  # over the fetches: 1, score, score^2, reward, score reward

    def promise(self, candidate: Candidate) -> None:
        if candidate.depth == 0:
            self.promised = 0.0
        elif not self.fitted:
            self.promised = candidate.score
        else:
            n, s, ss, y, sy = self._sums
            mean_s, mean_y = (s / n, y / n) if n else (0.0, 0.0)
            variance = ss / n - mean_s**2 if n >= 2 else 0.0
            slope = max((sy / n - mean_s * mean_y) / variance, 0.0) if variance > 1e-12 else 0.0
            self.promised = mean_y + slope * (candidate.score - mean_s)

    def learn(self, score: float, reward: float) -> None:
        self._sums += (1.0, score, score * score, reward, score * reward)

    def fetched(self, arm: str, reward: float) -> None:
        super().fetched(arm, reward - self.promised)


class _FullWeight(QLearningFrontier):
    """The sections' values at full weight from the start, whatever their skill: the
    base of the variants that value sections in other ways, as they were measured."""

    def __init__(self, **kw):  # type: ignore[no-untyped-def]
        super().__init__(**kw)
        self.section_weight = 1.0

    def _weigh_sections(self) -> None:
        pass


class _HostsMeanUnskilled(QLearningFrontier):
    """A host's mean reward weighed in where the sections' are not: by one less the
    sections' weight (their skill), so that where the sections tell nothing a host whose
    pages earn nothing still loses its place."""

    def __init__(self, **kw):  # type: ignore[no-untyped-def]
        super().__init__(host_values=SiteValues(), **kw)

    def host_bonus(self, host: str) -> float:
        values = self.host_values
        mean = values.weight * values.mean(host)
        return values.index(host) - self.section_weight * mean


class _CrawlMeanHosts(SiteValues):
    """Hosts' values that read the crawl's mean reward as well as their own pages', and
    so move all at once as it moves: `ranks_moved` says when every host must be ranked
    again (`_CrawlMeanHostsFrontier`)."""

    def __init__(self) -> None:
        super().__init__(weight=0.0)
        self._crawl = [0, 0.0]  # fetches, sum of rewards

    def fetched(self, arm: str, reward: float) -> None:
        super().fetched(arm, reward)
        self._crawl[0] += 1
        self._crawl[1] += reward

    def crawl_mean(self, prior: float = 0.0) -> float:
        """The mean reward of the crawl's pages, shrunk by n / (n + prior)."""
        fetches, total = self._crawl
        return total / (fetches + prior) if fetches + prior > 0 else 0.0

    def ranks_moved(self) -> bool:
        raise NotImplementedError


class _PoorHostsUnoptimistic(_CrawlMeanHosts):
    """A host's optimism, as the frontier gives it, but none for a host tried `after`
    times or more whose pages earned less than `share` of the crawl's mean reward: the
    round of the hosts by their tries that the optimism makes where it outweighs the
    rewards leaves out the hosts shown to be poor."""

    def __init__(self, after: int = 30, share: float = 0.5) -> None:
        super().__init__()
        self.after, self.share = after, share
        self._poor: frozenset[str] = frozenset()  # as the hosts were last ranked

    def poor(self, arm: str) -> bool:
        record = self._arms.get(arm)
        if record is None or record.tried < self.after or record.fetched == 0:
            return False
        return record.reward / record.fetched < self.share * self.crawl_mean()

    def ranks_moved(self) -> bool:
        poor = frozenset(arm for arm in self._arms if self.poor(arm))
        moved, self._poor = poor != self._poor, poor
        return moved

    def index(self, arm: str) -> float:
        return 0.0 if self.poor(arm) else super().index(arm)


class _ScaledHostOptimism(_CrawlMeanHosts):
    """A host's optimism on the scale of the crawl's rewards: `scale` times the mean
    reward of the crawl's pages, at most the frontier's own (0.1), so that where every
    page earns little (0.01 on "unicode utf-8 text encoding") the hosts' optimism does
    not outweigh what their links differ by. The hosts are ranked again once the scale
    moved by a tenth since they last were."""

    def __init__(self, scale: float = 3.0) -> None:
        super().__init__()
        self.scale = scale
        self._ranked_at = 0.0

    def scaled(self) -> float:
        return min(self.optimism, self.scale * self.crawl_mean(self.prior))

    def ranks_moved(self) -> bool:
        scaled = self.scaled()
        moved = abs(scaled - self._ranked_at) > 0.1 * max(self._ranked_at, 1e-9)
        if moved:
            self._ranked_at = scaled
        return moved

    def index(self, arm: str) -> float:
        return self.scaled() / math.sqrt(1 + self.tries(arm))


class _CrawlMeanHostsFrontier(QLearningFrontier):
    """The frontier with hosts valued by `_CrawlMeanHosts`: every host ranked again
    after a fetch that moved them all."""

    def __init__(self, host_values: _CrawlMeanHosts, **kw):  # type: ignore[no-untyped-def]
        super().__init__(host_values=host_values, **kw)
        self.crawl_mean_hosts = host_values

    def on_fetched(self, candidate, relevance, children):  # type: ignore[no-untyped-def]
        super().on_fetched(candidate, relevance, children)
        if self.crawl_mean_hosts.ranks_moved():
            self.refresh_all()


class _HostsCalibrated(QLearningFrontier):
    """Each host ranked by its head scaled by what the host's pages earned against what
    their links promised, relative to the crawl's: rho = ((R_h + p r) / (S_h + p s)) /
    (R / S), between 1/4 and 4, where R_h and S_h sum the rewards and the scores
    (best-first's estimates) of the host's fetched links, R and S the crawl's, r and s
    their means, p = 10 pages. Scaling a host's every URL keeps its own order, so the
    head alone is scaled, when hosts compete. A host whose pages earn a quarter of what
    their links promise (pandas' API reference on "unicode utf-8 text encoding") yields
    to one whose links promise what its pages earn. Best-first's order (rho 1) through
    the warmup."""

    def __init__(self, prior: float = 10.0, bound: float = 4.0, **kw):  # type: ignore[no-untyped-def]
        super().__init__(**kw)
        self.prior, self.bound = prior, bound
        self._earned: dict[str, list[float]] = {}  # host: [fetches, rewards, scores]
        self._crawl = [0.0, 0.0, 0.0]

    def calibration_of(self, host: str) -> float:
        n, rewards, scores = self._crawl
        if self.budget.warming_up or rewards <= 0.0 or scores <= 0.0:
            return 1.0
        _, h_rewards, h_scores = self._earned.get(host, (0.0, 0.0, 0.0))
        p = self.prior
        host_ratio = (h_rewards + p * rewards / n) / (h_scores + p * scores / n)
        rho = host_ratio / (rewards / scores)
        return min(max(rho, 1.0 / self.bound), self.bound)

    def _push_head(self, queues, host):  # type: ignore[no-untyped-def]
        key, depth, sequence, _ = self._best_group(queues)
        scaled = key * self.calibration_of(host)  # keys are negated priorities
        queues.head = head = (scaled - self.host_bonus(host), depth, sequence, host)
        heapq.heappush(self._heads, head)
        if len(self._heads) > 2 * len(self._queues) + HEADS_SLACK:
            self._rebuild_heads()

    def on_fetched(self, candidate, relevance, children):  # type: ignore[no-untyped-def]
        super().on_fetched(candidate, relevance, children)
        if candidate.revisit or candidate.depth == 0:
            return
        earned = self._earned.setdefault(candidate.host, [0.0, 0.0, 0.0])
        for totals in (earned, self._crawl):
            totals[0] += 1
            totals[1] += relevance
            totals[2] += candidate.score
        self._rebuild_heads()  # the crawl's ratio moves every host's


class _HarvestBudget(ExplorationBudget):
    """The exploration budget counted in relevant pages, not in reward: a page earns 1
    at the crawl's relevance threshold (`relevant_at`, 0.1) and 0 below it, so that
    exploring may cost alpha of the relevant pages best-first's order finds, not alpha
    of their mean relevance, which pages about the topic a little earn too."""

    def __init__(self, relevant_at: float = 0.1) -> None:
        super().__init__()
        self.relevant_at = relevant_at

    def fetched(self, url_id: int, reward: float) -> bool:
        return super().fetched(url_id, 1.0 if reward >= self.relevant_at else 0.0)


class _Surprised(_FullWeight):
    def on_fetched(self, candidate, relevance, children):  # type: ignore[no-untyped-def]
        sections = self.section_values
        assert isinstance(sections, _SurprisedSections)
        sections.promise(candidate)
        super().on_fetched(candidate, relevance, children)
        if candidate.depth > 0 and not candidate.revisit:
            sections.learn(candidate.score, relevance)


class _EveryValueMoves(_FullWeight):
    """For sections' values that all move with each fetch (`_RampedSections`,
    `_WeighedSections`): every section and host ranked by its value as it is after it."""

    def on_fetched(self, candidate, relevance, children):  # type: ignore[no-untyped-def]
        super().on_fetched(candidate, relevance, children)
        self.refresh_all()


class _RampedSections(SiteValues):
    """A section's mean reward weighed in as the crawl's fetches grow, n / (n + ramp)
    of its weight after n fetches in all; its optimism as it is."""

    def __init__(self, ramp: float) -> None:
        super().__init__()
        self.ramp, self.total = ramp, 0

    def fetched(self, arm: str, reward: float) -> None:
        self.total += 1
        super().fetched(arm, reward)

    def index(self, arm: str) -> float:
        record = self._arms.get(arm)
        if record is None:
            return self.optimism
        weight = self.weight * self.total / (self.total + self.ramp)
        return weight * self.mean(arm) + self.optimism / math.sqrt(1 + record.tried)


class _HarvestSections(SiteValues):
    """A section valued by the share of its fetched pages that are relevant (the crawl's
    relevance threshold, 0.1), not by their mean relevance: a section of pages that all
    resemble the topic a little (an API reference whose words are the topic's) is worth
    less than one of few pages that are about it."""

    def __init__(self, weight: float, threshold: float = 0.1) -> None:
        super().__init__(weight=weight)
        self.threshold = threshold

    def fetched(self, arm: str, reward: float) -> None:
        super().fetched(arm, 1.0 if reward >= self.threshold else 0.0)


class _SharedOptimism(SiteValues):
    """A host's optimism shared among its sections: each section's is the optimism over
    the square root of the sections of its host seen so far (Javadoc's 62 modules, a
    manual's eleven languages are not each worth as many tries as a site of three)."""

    def __init__(self) -> None:
        super().__init__()
        self._seen: dict[str, set[str]] = {}

    def index(self, arm: str) -> float:
        sections = self._seen.setdefault(arm.split("/", 1)[0], set())
        sections.add(arm)
        optimism = self.optimism / math.sqrt(len(sections))
        return self.weight * self.mean(arm) + optimism / math.sqrt(1 + self.tries(arm))


class _EmpiricalOptimism(SiteValues):
    """Optimism on the scale of what the crawl's sections are found worth: the value of
    the best tenth of the sections fetched at least 3 times (from 5 such sections on),
    between 0.01 and the fixed optimism."""

    def __init__(self) -> None:
        super().__init__()
        self.fixed = self.optimism

    def fetched(self, arm: str, reward: float) -> None:
        super().fetched(arm, reward)
        values = [
            self.weight * r.reward / (r.fetched + self.prior)
            for r in self._arms.values()
            if r.fetched >= 3
        ]
        if len(values) >= 5:
            self.optimism = min(self.fixed, max(0.01, float(np.quantile(values, 0.9))))


class _OptimismByMean(SiteValues):
    """An arm's optimism also bounded the way a variance-aware bound is (Bernstein's, as
    in KL-UCB for rewards in [0, 1]): sqrt(2 m c / (1 + n)) + c / (1 + n) for a mean m of
    its pages' rewards, c the optimism, n its tries; the lesser of that and the fixed
    optimism / sqrt(1 + n). An arm whose pages earn nothing loses its optimism as 1 / n,
    one whose pages earn something keeps it as now."""

    def index(self, arm: str) -> float:
        record = self._arms.get(arm)
        if record is None:
            return self.optimism
        c, n = self.optimism, 1 + record.tried
        mean = record.reward / record.fetched if record.fetched else 0.0
        bonus = min(c / math.sqrt(n), math.sqrt(2 * max(mean, 0.0) * c / n) + c / n)
        return self.weight * self.mean(arm) + bonus


class _CappedOptimism(SiteValues):
    """Optimism for an arm's first `cap` tries only: after them it is worth what its
    pages earned, so that exploring a host or section costs at most `cap` pages where
    the rewards are all alike and small."""

    def __init__(self, cap: int, weight: float = 3.0) -> None:
        super().__init__(weight=weight)
        self.cap = cap

    def index(self, arm: str) -> float:
        tried = self.tries(arm)
        optimism = self.optimism / math.sqrt(1 + tried) if tried < self.cap else 0.0
        return self.weight * self.mean(arm) + optimism


class _GatedSections(SiteValues):
    """The sections of a host valued only once the host's pages are shown to earn more
    than the crawl's: its mean reward above the crawl's by more than `z` standard
    errors of its own (from 3 fetches on); elsewhere a link ranks by its own index."""

    def __init__(self, z: float = 2.0) -> None:
        super().__init__()
        self.z = z
        self._hosts: dict[str, list[float]] = {}  # fetches, sum, sum of squares
        self._crawl = [0.0, 0.0]  # fetches, sum

    def fetched(self, arm: str, reward: float) -> None:
        super().fetched(arm, reward)
        host = self._hosts.setdefault(arm.split("/", 1)[0], [0.0, 0.0, 0.0])
        host[0] += 1
        host[1] += reward
        host[2] += reward * reward
        self._crawl[0] += 1
        self._crawl[1] += reward

    def shown(self, host: str) -> bool:
        record = self._hosts.get(host)
        if record is None or record[0] < 3:
            return False
        n, total, squares = record
        mean = total / n
        error = math.sqrt(max(squares / n - mean * mean, 0.0) / (n - 1))
        return mean - self._crawl[1] / self._crawl[0] > self.z * error

    def index(self, arm: str) -> float:
        return super().index(arm) if self.shown(arm.split("/", 1)[0]) else 0.0


class _SkillByTargets(SiteValues):
    """The sections' values weighed by a skill measured against the link model's
    calibration, which maps a link's score to eq. (10)'s targets (the reward and what
    the fetch revealed), not to the reward: one minus the ratio of the squared errors of
    the section's shrunk mean and of that calibrated score, each predicting the fetched
    page's reward before it is learned from; no floor on the errors, shrunk by
    n / (n + `shrink`); every section ranked again after each fetch. The calibration
    overstates the reward, so this skill is above the sections' own (`SectionSkill`)."""

    def __init__(self, shrink: float = 50.0) -> None:
        super().__init__()
        self.shrink = shrink
        self.errors = [0.0, 0.0, 0]  # the sections', the links', fetches

    def learn(self, arm: str, predicted_by_link: float, reward: float) -> None:
        predicted_by_section = self.mean(arm)
        self.errors[0] += (reward - predicted_by_section) ** 2
        self.errors[1] += (reward - predicted_by_link) ** 2
        self.errors[2] += 1

    def skill(self) -> float:
        sections, links, n = self.errors
        if n == 0 or links <= 0.0:
            return 0.0
        return max(0.0, 1.0 - sections / links) * n / (n + self.shrink)

    def index(self, arm: str) -> float:
        return self.skill() * super().index(arm)


class _SkilledByTargets(_EveryValueMoves):
    """Its sections' values apply their own skill (`_SkillByTargets`)."""

    def on_fetched(self, candidate, relevance, children):  # type: ignore[no-untyped-def]
        sections = self.section_values
        assert isinstance(sections, _SkillByTargets)
        if candidate.depth > 0 and not candidate.revisit:
            offset, slope = self.model.calibration()
            predicted = offset + slope * candidate.score
            sections.learn(section_of(candidate.url), predicted, relevance)
        super().on_fetched(candidate, relevance, children)


class _HostsCarryMean(QLearningFrontier):
    """The pages' mean reward counted once, split between the levels: a host's sections
    carry the skill's share of it, the host the rest, weighed `mean_weight` (3: as a
    section's)."""

    def __init__(self, mean_weight: float = 3.0, **kw):  # type: ignore[no-untyped-def]
        super().__init__(**kw)
        self.mean_weight = mean_weight

    def host_bonus(self, host: str) -> float:
        carried = self.mean_weight * (1.0 - self.section_weight)
        return super().host_bonus(host) + carried * self._host_reward(host)

    def _host_reward(self, host: str) -> float:
        return self.host_values.mean(host)


class _HostsCarryRecent(_HostsCarryMean):
    """As `_HostsCarryMean`, with the host's running reward over its recent fetches
    (the memory of patience's, 0.9) in place of its mean over all."""

    def _host_reward(self, host: str) -> float:
        return self._recent_reward.get(host, 0.0)


class _PatientUnbudgeted(QLearningFrontier):
    """Patience whether or not the budget affords exploring: waiting for a host whose
    pages earn more than the crawl's costs time, not pages."""

    def _worth_waiting(self, host, rank, awaited_host, awaited_rank):  # type: ignore[no-untyped-def]
        exploring = self.budget.exploring
        self.budget.exploring = True
        try:
            return super()._worth_waiting(host, rank, awaited_host, awaited_rank)
        finally:
            self.budget.exploring = exploring


class _PatientWhileExploring(QLearningFrontier):
    """Patience only while the budget affords exploring: in best-first's order, the
    warmup's pages included, every slot is filled."""

    def _worth_waiting(self, host, rank, awaited_host, awaited_rank):  # type: ignore[no-untyped-def]
        if not self.budget.exploring:
            return False
        return super()._worth_waiting(host, rank, awaited_host, awaited_rank)


class _PatientExploiting(QLearningFrontier):
    """Patience in best-first's order only: once the warmup's pages are in, a slot waits
    for the best host while the budget does not afford exploring, and goes to any host
    while it does (the tries of the barely tried need the slots)."""

    def _worth_waiting(self, host, rank, awaited_host, awaited_rank):  # type: ignore[no-untyped-def]
        budget = self.budget
        if budget.exploring or budget.warming_up:
            return False
        budget.exploring = True
        try:
            return super()._worth_waiting(host, rank, awaited_host, awaited_rank)
        finally:
            budget.exploring = False


class _ChoiceBudget(ExplorationBudget):
    """A page taken while exploring counts as exploring only when it is not the page
    best-first would have taken then."""

    def taken_as(self, url_id: int, explored: bool) -> None:
        self._taken[url_id] = explored


class _GatedModel(LinkContextModel):
    """The link model, its skill held at zero while `gated`: it learns, and corrects
    nothing."""

    gated = True

    def skill(self) -> float:
        return 0.0 if self.gated else super().skill()


class _UncorrectedWarmup(QLearningFrontier):
    """The link model's and the sections' corrections held at zero too until the
    warmup's pages are in: until then the queue is ranked exactly as best-first's."""

    def __init__(self, **kw):  # type: ignore[no-untyped-def]
        super().__init__(model=_GatedModel(), **kw)

    def _weigh_sections(self) -> None:
        if not self.budget.warming_up:
            super()._weigh_sections()

    def on_fetched(self, candidate, relevance, children):  # type: ignore[no-untyped-def]
        model = self.model
        assert isinstance(model, _GatedModel)
        model.gated = self.budget.warming_up
        super().on_fetched(candidate, relevance, children)


class _BaselineChoice(QLearningFrontier):
    """`_ChoiceBudget`: while the budget affords exploring, each pop first finds the page
    best-first's order would take, and puts it back; best-first's own pages, taken while
    exploring, count in the baseline's rate and cost nothing."""

    def __init__(self, **kw):  # type: ignore[no-untyped-def]
        super().__init__(budget=_ChoiceBudget(), **kw)

    def _greedy(self, is_ready):  # type: ignore[no-untyped-def]
        """Best-first's choice among the hosts `is_ready`, put back."""
        found = PriorityFrontier.pop(self, is_ready, None)
        if found is not None:
            self.push(found)
        return found

    def _rank(self, on: bool) -> None:
        self._explore(on)
        self.refresh_all()

    def pop(self, is_ready, turn_comes=None):  # type: ignore[no-untyped-def]
        budget = self.budget
        assert isinstance(budget, _ChoiceBudget)
        if not budget.exploring:
            return super().pop(is_ready, turn_comes)
        self._rank(False)
        greedy = self._greedy(is_ready)
        self._rank(True)
        return self._taken_against(greedy, super().pop(is_ready, turn_comes))

    def _taken_against(self, greedy, candidate):  # type: ignore[no-untyped-def]
        """`candidate`, told to the budget as explored unless it is best-first's choice."""
        if candidate is not None and not candidate.revisit:
            explored = greedy is None or greedy.url_id != candidate.url_id
            budget = self.budget
            assert isinstance(budget, _ChoiceBudget)
            budget.taken_as(candidate.url_id, explored)
        return candidate


class _ExploresPoorSlots(_BaselineChoice):
    """Exploring only in the slots best-first would spend on a poor link: while the budget
    affords exploring, a pop takes best-first's choice (the queue ranked without the
    optimism) when it ranks at least `patience` times the best link queued, ready or not,
    and otherwise the choice of the order with the optimism, as patience would leave
    such a slot idle."""

    def pop(self, is_ready, turn_comes=None):  # type: ignore[no-untyped-def]
        if not self.budget.exploring:
            return QLearningFrontier.pop(self, is_ready, turn_comes)
        self._rank(False)
        greedy, best = self._greedy(is_ready), self._greedy(lambda host: True)
        good = (
            greedy is not None
            and best is not None
            and self.priority(greedy) >= self.patience * self.priority(best)
        )
        if good:
            candidate = QLearningFrontier.pop(self, is_ready, None)
            self._rank(True)
        else:
            self._rank(True)
            candidate = QLearningFrontier.pop(self, is_ready, turn_comes)
        return self._taken_against(greedy, candidate)


class _PredictedBaselineBudget(ExplorationBudget):
    """The baseline's reward of each page taken is predicted at the time it is taken,
    from the score of the best link queued then (best-first's choice, ready or not),
    scaled by what best-first's choices earned against their predictions (the pages
    taken while not exploring, with forgetting over about `memory` of them): not the
    running mean of those pages' rewards, which stands still while the crawl explores."""

    def __init__(self, **kw):  # type: ignore[no-untyped-def]
        super().__init__(**kw)
        self.predicted: dict[int, float | None] = {}
        self.next_prediction: float | None = None
        self.sums = [0.0, 0.0]  # best-first's choices: predictions, rewards
        self._predicted_now: float | None = None  # the page being counted's, scaled

    def taken(self, url_id: int) -> None:
        super().taken(url_id)
        self.predicted[url_id] = self.next_prediction

    def forget(self, url_id: int) -> None:
        super().forget(url_id)
        self.predicted.pop(url_id, None)

    def fetched(self, url_id: int, reward: float) -> bool:
        predicted = self.predicted.pop(url_id, None)
        if predicted is not None and self._taken.get(url_id) is False:  # best-first's
            f = 1.0 - 1.0 / self.memory
            self.sums = [f * self.sums[0] + predicted, f * self.sums[1] + reward]
        self._predicted_now = (
            predicted * self.sums[1] / self.sums[0]
            if predicted is not None and self.sums[0] > 0.0
            else None
        )
        return super().fetched(url_id, reward)

    def _baseline_reward(self, reward: float, *, own: bool) -> float:
        if self._predicted_now is None:
            return super()._baseline_reward(reward, own=own)
        return self._predicted_now


class _RunningMeanBudget(ExplorationBudget):
    """Every page counts in the budget's baseline at the baseline's rate, the running
    mean of the pages taken while not exploring, the baseline's own pages too: a rate
    that lags a crawl's falling rewards."""

    def _baseline_reward(self, reward: float, *, own: bool) -> float:
        return self.baseline_rate


class _PredictedBaseline(QLearningFrontier):
    """`_PredictedBaselineBudget`, with the queue's scores in a heap of their own (stale
    entries skipped when looked at)."""

    def __init__(self, **kw):  # type: ignore[no-untyped-def]
        super().__init__(budget=_PredictedBaselineBudget(), **kw)
        self._by_score: list[tuple[float, int]] = []
        self._queued: dict[int, int] = {}

    def push(self, candidate: Candidate) -> None:
        super().push(candidate)
        if not candidate.revisit and candidate.depth > 0:  # a link, scored by its words
            heapq.heappush(self._by_score, (-candidate.score, candidate.url_id))
            self._queued[candidate.url_id] = self._queued.get(candidate.url_id, 0) + 1

    def _unqueue(self, url_id: int) -> None:
        left = self._queued.get(url_id, 0) - 1
        if left > 0:
            self._queued[url_id] = left
        else:
            self._queued.pop(url_id, None)

    def pop(self, is_ready, turn_comes=None):  # type: ignore[no-untyped-def]
        heap = self._by_score
        while heap and heap[0][1] not in self._queued:
            heapq.heappop(heap)
        budget = self.budget
        assert isinstance(budget, _PredictedBaselineBudget)
        budget.next_prediction = -heap[0][0] if heap else None
        candidate = super().pop(is_ready, turn_comes)
        if candidate is not None and not candidate.revisit:
            self._unqueue(candidate.url_id)
        return candidate

    def drop_host(self, host: str) -> list[Candidate]:
        dropped = super().drop_host(host)
        for candidate in dropped:
            self._unqueue(candidate.url_id)
        return dropped


def _unbudgeted() -> ExplorationBudget:
    """A budget that always affords exploring: the optimism and patience from the first
    page, as the frontier had them before it kept a budget."""
    return ExplorationBudget(alpha=1.0, warmup=0)


class _RampedOptimism(SiteValues):
    """Optimism weighed in as the crawl's fetches grow, n / (n + ramp) of it after n
    fetches in all (`crawl` counts them for the hosts and the sections alike): the first
    pages in best-first's order, the barely tried arms tried once some pages are in."""

    def __init__(self, crawl: list[int], ramp: float, weight: float = 3.0) -> None:
        super().__init__(weight=weight)
        self.crawl, self.ramp = crawl, ramp

    def index(self, arm: str) -> float:
        n = self.crawl[0]
        self.optimism = self.full_optimism * n / (n + self.ramp)
        return super().index(arm)


class _OptimismRamped(QLearningFrontier):
    """Hosts and sections with `_RampedOptimism`; every head ranked again as it grows."""

    def __init__(self, ramp: float, **kw):  # type: ignore[no-untyped-def]
        self.crawl = [0]
        super().__init__(
            host_values=_RampedOptimism(self.crawl, ramp, weight=0.0),
            section_values=_RampedOptimism(self.crawl, ramp),
            budget=_unbudgeted(),
            **kw,
        )

    def on_fetched(self, candidate, relevance, children):  # type: ignore[no-untyped-def]
        if not candidate.revisit:
            self.crawl[0] += 1
        super().on_fetched(candidate, relevance, children)
        self.refresh_all()


class _TestedSkill(SectionSkill):
    """The skill counted only once the sections' errors are significantly below the
    links': the mean of the differences of their squared errors over its standard
    error (Diebold & Mariano's test, with the skill's forgetting) at least `z`."""

    def __init__(self, z: float = 2.0, **kw):  # type: ignore[no-untyped-def]
        super().__init__(**kw)
        self.z = z
        self.differences = [0.0, 0.0, 0.0, 0.0]  # weights, their squares, sums of d, of d^2

    def learn(self, by_section: float, score: float, reward: float) -> None:
        if self.pages >= 2:
            d = max((reward - self.by_link(score)) ** 2, self.noise) - max(
                (reward - by_section) ** 2, self.noise
            )
            f = self.forgetting
            w, w2, s, ss = self.differences
            self.differences = [f * w + 1, f * f * w2 + 1, f * s + d, f * ss + d * d]
        super().learn(by_section, score, reward)

    def value(self) -> float:
        w, w2, s, ss = self.differences
        if w <= 0.0:
            return 0.0
        mean = s / w
        variance = max(ss / w - mean * mean, 0.0)
        effective = w * w / w2
        if variance <= 0.0 or mean / math.sqrt(variance / effective) < self.z:
            return 0.0
        return super().value()


class _RecentSections(SiteValues):
    """A section's mean over its recent fetches: each counts `keep` times the next (the
    section's best links are taken first, so its early rewards overstate its later)."""

    def __init__(self, keep: float) -> None:
        super().__init__()
        self.keep = keep
        self._decayed: dict[str, tuple[float, float]] = {}  # arm: fetches, reward

    def fetched(self, arm: str, reward: float) -> None:
        super().fetched(arm, reward)
        fetches, total = self._decayed.get(arm, (0.0, 0.0))
        self._decayed[arm] = (self.keep * fetches + 1, self.keep * total + reward)

    def index(self, arm: str) -> float:
        fetches, total = self._decayed.get(arm, (0.0, 0.0))
        mean = total / (fetches + self.prior)
        return self.weight * mean + self.optimism / math.sqrt(1 + self.tries(arm))


class _WeighedSections(SiteValues):
    """A section's mean weighed by c / b of the least-squares fit reward = a + b score +
    c mean over the crawl's fetches (the mean its section had when each was fetched),
    at most 3, once `after` fetches are in; 3 before."""

    def __init__(self, after: int = 30) -> None:
        super().__init__()
        self.after, self.fetches = after, 0
        self._sums = np.zeros((3, 4))  # X'X | X'y, X = (1, score, mean)

    def learn(self, score: float, mean: float, reward: float) -> None:
        x = np.array([1.0, score, mean])
        self._sums += np.outer(x, np.append(x, reward))
        self.fetches += 1
        if self.fetches >= self.after:
            a_b_c = np.linalg.solve(self._sums[:, :3] + 1e-6 * np.eye(3), self._sums[:, 3])
            b, c = a_b_c[1], a_b_c[2]
            self.weight = float(np.clip(c / b, 0.0, 3.0)) if b > 1e-3 else 3.0 * (c > 0)


class _Weighed(_EveryValueMoves):
    def on_fetched(self, candidate, relevance, children):  # type: ignore[no-untyped-def]
        sections = self.section_values
        assert isinstance(sections, _WeighedSections)
        if candidate.depth > 0 and not candidate.revisit:
            sections.learn(candidate.score, sections.mean(section_of(candidate.url)), relevance)
        super().on_fetched(candidate, relevance, children)


class _Scaled(_FullWeight):
    """A section's mean reward scaled by its head's own index over the mean score of the
    links fetched there (at most 1): a section whose best links were taken lifts its
    weaker ones less; its optimism as it is."""

    def __init__(self, **kw):  # type: ignore[no-untyped-def]
        super().__init__(**kw)
        self._fetched_scores: dict[str, tuple[int, float]] = {}  # section: (n, sum)

    def _group_head(self, queue, group):  # type: ignore[no-untyped-def]
        key, depth, sequence = queue[0]
        return (key - self._scaled_bonus(group, -key), depth, sequence, group)

    def _scaled_bonus(self, section: str, own: float) -> float:
        values = self.section_values
        record = values._arms.get(section)
        if record is None:
            return values.optimism
        mean = record.reward / (record.fetched + values.prior)
        n, total = self._fetched_scores.get(section, (0, 0.0))
        scale = 1.0 if n == 0 or total <= 0.0 else min(1.0, max(own, 0.0) / (total / n))
        return values.weight * mean * scale + values.optimism / math.sqrt(1 + record.tried)

    def on_fetched(self, candidate, relevance, children):  # type: ignore[no-untyped-def]
        if not candidate.revisit and candidate.depth > 0:
            section = section_of(candidate.url)
            n, total = self._fetched_scores.get(section, (0, 0.0))
            self._fetched_scores[section] = (n + 1, total + candidate.score)
        super().on_fetched(candidate, relevance, children)


class _WholeHosts(QLearningFrontier):
    """Each host chosen re-ranked whole, however many URLs it holds."""

    def reprioritize_slice(self, host: str, limit: int) -> tuple[int, bool]:
        return super().reprioritize_slice(host, max(limit, len(self)))


def _directory_of(url: str) -> str:
    """The host and the URL's directory: its path up to the last slash."""
    parts = url.split("?", 1)[0].split("/", 3)  # scheme, "", host, path
    if len(parts) < 4 or "/" not in parts[3]:
        return f"{parts[2] if len(parts) > 2 else url}/"
    return f"{parts[2]}/{parts[3].rsplit('/', 1)[0]}"


def _two_segments_of(url: str) -> str:
    """The host and the first two segments of the URL's directory, or its first."""
    return "/".join(_directory_of(url).split("/", 3)[:3])


class _DirectorySections(QLearningFrontier):
    section_of = staticmethod(_directory_of)


class _TwoSegmentSections(QLearningFrontier):
    section_of = staticmethod(_two_segments_of)


class _PooledSections(SiteValues):
    """Arms by directory, each directory's mean reward shrunk towards its first
    segment's (not towards zero), and the optimism counted by the first segment's tries."""

    def __init__(self) -> None:
        super().__init__()
        self.parents = SiteValues()

    @staticmethod
    def parent(arm: str) -> str:
        return "/".join(arm.split("/")[:2])

    def explore(self, on: bool) -> None:
        super().explore(on)
        self.parents.explore(on)

    def tried(self, arm: str) -> None:
        super().tried(arm)
        self.parents.tried(self.parent(arm))

    def fetched(self, arm: str, reward: float) -> None:
        super().fetched(arm, reward)
        self.parents.fetched(self.parent(arm), reward)

    def mean(self, arm: str) -> float:
        parent_mean = self.parents.mean(self.parent(arm))
        record = self._arms.get(arm)
        if record is None:
            return parent_mean
        return (record.reward + self.prior * parent_mean) / (record.fetched + self.prior)

    def index(self, arm: str) -> float:
        tried = self.parents.tries(self.parent(arm))
        return self.weight * self.mean(arm) + self.optimism / math.sqrt(1 + tried)


class _PooledDirectorySections(_DirectorySections):
    """Directories as sections, pooled by their first segment: a fetch or try moves every
    directory of the host."""

    def __init__(self, **kw):  # type: ignore[no-untyped-def]
        super().__init__(section_values=_PooledSections(), **kw)

    def refresh_group(self, host: str, group: str) -> None:
        queues = self._queues.get(host)
        if queues is not None:
            self._rebuild_group_heads(queues)
            self._push_head(queues, host)


class _ChildrenBackedUp(QLearningFrontier):
    """A fetched link learned again when one of the pages it revealed is fetched and
    earns more than its other revealed pages did: towards its own reward plus gamma
    times that page's, eq. (10)'s target with the revealed value seen rather than
    estimated (the best child, as `bench/clairvoyant.py`'s `lookahead` counts it), so
    that links like those that led to relevant pages rise before their pages are."""

    def __init__(self, **kw: object) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]
        self._discoverer: dict[int, int] = {}  # a queued URL's id -> its parent's
        # a fetched parent's id -> its link's features and score, its reward, its best child's
        self._parents: dict[int, tuple[Row, float, float, float]] = {}

    def on_fetched(
        self, candidate: Candidate, relevance: float, children: Sequence[Candidate]
    ) -> None:
        # read before the frontier's own step pops it, as that step reads it
        row = self._features.get(candidate.url_id) or self._describe([candidate])[0]
        if not candidate.revisit:
            self._back_up(self._discoverer.pop(candidate.url_id, None), relevance)
        super().on_fetched(candidate, relevance, children)
        if candidate.revisit or not children:
            return
        self._parents[candidate.url_id] = (row, candidate.score, relevance, 0.0)
        for child in children:
            self._discoverer.setdefault(child.url_id, candidate.url_id)

    def _back_up(self, parent: int | None, reward: float) -> None:
        if parent is None or parent not in self._parents:
            return
        row, score, own, best = self._parents[parent]
        if reward <= best:
            return
        self._parents[parent] = (row, score, own, reward)
        refits = self.model.refits_
        self.model.update(row, score, own + self.settings.gamma * reward)
        if self.model.refits_ > refits:
            self._rerank_some()


class _RelativesRaised(QLearningFrontier):
    """The frontier's raise of a relevant page's relatives (`relative_levels`: the queued
    pages found with it, and at 2 those found with its discoverer), never lowered and
    not held back through the warmup: raised from the first page on, or with
    `after_warmup` not at all for the warmup's pages."""

    def __init__(self, after_warmup: bool = False, levels: int = 2, **kw: object) -> None:
        super().__init__(
            relative_levels=levels,
            relatives_lowered_after=None,
            **kw,  # type: ignore[arg-type]
        )
        self.after_warmup = after_warmup  # raise nothing while the warmup's pages come in

    def _raise_relatives_of(self, url_id: int, relevance: float) -> None:
        if relevance < self.relevant_at or (self.after_warmup and self.budget.warming_up):
            return
        self._raise_relatives(url_id, relevance)


class _UngatedSectionOptimism(QLearningFrontier):
    """A section's optimism at full weight while the budget affords exploring, its mean
    reward weighed by the sections' skill."""

    def section_index(self, section: str) -> float:
        values = self.section_values
        optimism = values.optimism / math.sqrt(1 + values.tries(section))
        return self.section_weight * values.weight * values.mean(section) + optimism


VARIANTS: dict[str, Callable[..., PriorityFrontier]] = {
    "qlearning": lambda **kw: QLearningFrontier(**kw),
    "rerank-whole-hosts": lambda **kw: _WholeHosts(**kw),
    "rerank-4000": lambda **kw: QLearningFrontier(rerank_budget=4_000, **kw),
    # best-first again, crawled in its own turn of each run: how far two crawls of one
    # policy's order fall apart at each cutoff, the spread any comparison stands on
    "best-first-again": lambda **kw: BestFirst(**kw),
    "untrained": lambda **kw: QLearningFrontier(model=_Untrained(), **kw),
    "confident": lambda **kw: QLearningFrontier(model=_Confident(), **kw),
    "skill-by-ranking": lambda **kw: QLearningFrontier(model=_RankingSkill(), **kw),
    "ridge": lambda **kw: QLearningFrontier(model=_RidgeRefit(), **kw),
    "ridge-by-ranking": lambda **kw: QLearningFrontier(model=_RidgeRanked(), **kw),
    "ridge-confident": lambda **kw: QLearningFrontier(model=_RidgeConfident(), **kw),
    "immediate": lambda **kw: QLearningFrontier(LearningSettings(gamma=0.0), **kw),
    "no-words": lambda **kw: _NoWords(**kw),
    "impatient": lambda **kw: QLearningFrontier(**{**kw, "patience": 0.0}),
    "waits-untried": lambda **kw: QLearningFrontier(patient_after=0, **kw),
    "surprise": lambda **kw: _Surprised(section_values=_SurprisedSections(False), **kw),
    "surprise-fitted": lambda **kw: _Surprised(section_values=_SurprisedSections(True), **kw),
    "sections-prior-20": lambda **kw: _FullWeight(section_values=SiteValues(prior=20.0), **kw),
    "sections-ramped": lambda **kw: _EveryValueMoves(section_values=_RampedSections(100.0), **kw),
    "sections-harvest": lambda **kw: _FullWeight(section_values=_HarvestSections(0.5), **kw),
    "sections-harvest-0.3": lambda **kw: _FullWeight(section_values=_HarvestSections(0.3), **kw),
    "shared-optimism": lambda **kw: _EveryValueMoves(section_values=_SharedOptimism(), **kw),
    "empirical-optimism": lambda **kw: _EveryValueMoves(section_values=_EmpiricalOptimism(), **kw),
    "sections-mean-only": lambda **kw: _FullWeight(section_values=SiteValues(optimism=0.0), **kw),
    "sections-optimism-only": lambda **kw: _FullWeight(section_values=SiteValues(weight=0.0), **kw),
    "capped-optimism": lambda **kw: _FullWeight(
        host_values=_CappedOptimism(10, weight=0.0), section_values=_CappedOptimism(10), **kw
    ),
    "capped-optimism-5": lambda **kw: _FullWeight(
        host_values=_CappedOptimism(5, weight=0.0), section_values=_CappedOptimism(5), **kw
    ),
    "capped-optimism-20": lambda **kw: _FullWeight(
        host_values=_CappedOptimism(20, weight=0.0), section_values=_CappedOptimism(20), **kw
    ),
    "gated-sections": lambda **kw: _EveryValueMoves(section_values=_GatedSections(), **kw),
    "ungated-sections": lambda **kw: _FullWeight(**kw),
    "skill-by-targets": lambda **kw: _SkilledByTargets(section_values=_SkillByTargets(), **kw),
    "sections-recent": lambda **kw: _FullWeight(section_values=_RecentSections(0.9), **kw),
    "sections-weighed": lambda **kw: _Weighed(section_values=_WeighedSections(), **kw),
    "sections-scaled": lambda **kw: _Scaled(**kw),
    "hosts-carry-mean": lambda **kw: _HostsCarryMean(**kw),
    "hosts-carry-mean-capped": lambda **kw: _HostsCarryMean(
        host_values=_CappedOptimism(10, weight=0.0), **kw
    ),
    "hosts-carry-mean-1": lambda **kw: _HostsCarryMean(1.0, **kw),
    "hosts-carry-recent": lambda **kw: _HostsCarryRecent(**kw),
    "skill-tested": lambda **kw: QLearningFrontier(section_skill=_TestedSkill(), **kw),
    "optimism-0.03": lambda **kw: QLearningFrontier(
        host_values=SiteValues(optimism=0.03, weight=0.0),
        section_values=SiteValues(optimism=0.03),
        **kw,
    ),
    "hosts-capped": lambda **kw: QLearningFrontier(
        host_values=_CappedOptimism(10, weight=0.0), **kw
    ),
    "optimism-by-mean": lambda **kw: QLearningFrontier(
        host_values=_OptimismByMean(weight=0.0), section_values=_OptimismByMean(), **kw
    ),
    "hosts-optimism-by-mean": lambda **kw: QLearningFrontier(
        host_values=_OptimismByMean(weight=0.0), **kw
    ),
    "unbudgeted": lambda **kw: QLearningFrontier(budget=_unbudgeted(), **kw),
    "budget-0.5": lambda **kw: QLearningFrontier(budget=ExplorationBudget(alpha=0.5), **kw),
    "budget-0.3": lambda **kw: QLearningFrontier(budget=ExplorationBudget(alpha=0.3), **kw),
    "warmup-50": lambda **kw: QLearningFrontier(budget=ExplorationBudget(warmup=50), **kw),
    "warmup-10": lambda **kw: QLearningFrontier(budget=ExplorationBudget(warmup=10), **kw),
    "warmup-uncorrected": lambda **kw: _UncorrectedWarmup(**kw),
    "predicted-baseline": lambda **kw: _PredictedBaseline(**kw),
    "baseline-choice": lambda **kw: _BaselineChoice(**kw),
    "baseline-running-mean": lambda **kw: QLearningFrontier(
        budget=_RunningMeanBudget(alpha=0.3), **kw
    ),
    "baseline-running-mean-0.1": lambda **kw: QLearningFrontier(
        budget=_RunningMeanBudget(alpha=0.1), **kw
    ),
    "explores-poor-slots": lambda **kw: _ExploresPoorSlots(**kw),
    "budget-0": lambda **kw: QLearningFrontier(budget=ExplorationBudget(alpha=0.0), **kw),
    "budget-patient": lambda **kw: _PatientUnbudgeted(**kw),
    "patient-exploiting": lambda **kw: _PatientExploiting(**kw),
    "patient-while-exploring": lambda **kw: _PatientWhileExploring(**kw),
    "optimism-ramped-50": lambda **kw: _OptimismRamped(50.0, **kw),
    "optimism-ramped-200": lambda **kw: _OptimismRamped(200.0, **kw),
    "optimism-ramped-200-impatient": lambda **kw: _OptimismRamped(200.0, **{**kw, "patience": 0.0}),
    "hosts-mean-unskilled": lambda **kw: _HostsMeanUnskilled(**kw),
    "unsectioned": lambda **kw: QLearningFrontier(
        host_values=SiteValues(), section_values=SiteValues(optimism=0.0, weight=0.0), **kw
    ),
    "sections-by-directory": lambda **kw: _DirectorySections(**kw),
    "sections-two-segments": lambda **kw: _TwoSegmentSections(**kw),
    "sections-by-directory-pooled": lambda **kw: _PooledDirectorySections(**kw),
    "ungated-section-optimism": lambda **kw: _UngatedSectionOptimism(**kw),
    "children-backed-up": lambda **kw: _ChildrenBackedUp(**kw),
    "relatives-raised": lambda **kw: _RelativesRaised(**kw),
    "relatives-raised-after-warmup": lambda **kw: _RelativesRaised(after_warmup=True, **kw),
    "siblings-raised": lambda **kw: _RelativesRaised(levels=1, **kw),
    "unraised": lambda **kw: QLearningFrontier(relative_levels=0, **kw),
    "relatives-raised-deferred": lambda **kw: QLearningFrontier(
        relative_levels=2, relatives_lowered_after=None, **kw
    ),
    "siblings-raised-deferred": lambda **kw: QLearningFrontier(
        relative_levels=1, relatives_lowered_after=None, **kw
    ),
    "relatives-raised-while-paying": lambda **kw: QLearningFrontier(
        relative_levels=2, relatives_lowered_after=10, **kw
    ),
    "siblings-raised-while-paying": lambda **kw: QLearningFrontier(
        relative_levels=1, relatives_lowered_after=10, **kw
    ),
    "raise-kept-by-leading-on": lambda **kw: QLearningFrontier(
        relatives_kept_by_relevance=False, **kw
    ),
    "poor-hosts-unoptimistic": lambda **kw: _CrawlMeanHostsFrontier(_PoorHostsUnoptimistic(), **kw),
    "budget-by-harvest": lambda **kw: QLearningFrontier(budget=_HarvestBudget(), **kw),
    "host-optimism-scaled": lambda **kw: _CrawlMeanHostsFrontier(_ScaledHostOptimism(), **kw),
    "hosts-calibrated": lambda **kw: _HostsCalibrated(**kw),
}


def register_variants() -> None:
    """Each variant as a frontier policy named ablation-<variant>."""
    for name, make in VARIANTS.items():
        label = f"ablation-{name}"

        def factory(make=make, label=label, **settings) -> PriorityFrontier:  # type: ignore[no-untyped-def]
            MADE[label] = frontier = make(**settings)
            return frontier

        register_frontier_policy(label, factory)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ground-truth", type=Path, required=True)
    parser.add_argument(
        "--truth-threshold", type=float, help="default: the ground truth's threshold.txt"
    )
    parser.add_argument("--budget", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--per-host-concurrency", type=int, default=4)
    parser.add_argument("--variants", nargs="+", choices=list(VARIANTS), default=list(VARIANTS))
    args = parser.parse_args()
    register_variants()
    web = TruthWeb.read(args.ground_truth, args.truth_threshold)
    await check_served(web)
    holding = web.relevant_by_host()
    print(f"ground truth {args.ground_truth.name}")  # named for bench/pool_focus_rounds.py
    print(f"relevant pages by host: {holding}")
    settings = CrawlSettings(args.budget, per_host_concurrency=args.per_host_concurrency)
    names = ["best-first", *(f"ablation-{v}" for v in args.variants)]
    results: dict[str, list[dict[str, float]]] = {name: [] for name in names}
    with tempfile.TemporaryDirectory(prefix="focus-ablations-") as scratch:
        for run in range(args.repeat):
            for name in rotated(names, run):
                order = await crawl_order(web, name, settings, Path(scratch))
                report = focus(web.truth_of(order, args.budget), web, args.budget)
                results[name].append(report)
                spent = web.pages_by_host(order, args.budget)
                line = " ".join(f"{k}={v:.3f}" for k, v in report.items() if k.startswith("recall"))
                spread = {host: spent.get(host, (0, 0))[0] for host in holding}
                line += f" pages of hosts holding relevant ones {spread}"
                frontier = MADE.get(name)
                if isinstance(frontier, QLearningFrontier):
                    model = frontier.model
                    line += f" skill {model.skill():.3f} max |w| {np.abs(model.weights_).max():.4f}"
                    sections = frontier.section_values
                    if isinstance(sections, _SkillByTargets):  # its skill is in its values
                        line += f" sections' skill {sections.skill():.3f}"
                    else:
                        line += f" sections' skill {frontier.section_weight:.3f}"
                    line += f" sections' mean weighed {sections.weight:.2f}"
                print(f"run {run} {name}: {line}", flush=True)
    print(f"\nmedians over {args.repeat} runs")
    medians = {
        name: {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        for name, runs in results.items()
    }
    for name, median in medians.items():
        keys = [k for k in median if k.startswith(("recall", "pages_to"))]
        print(f"{name:<26} " + " ".join(f"{k}={median[k]:.3f}" for k in keys))
    for name, median in medians.items():
        behind = [
            k for k in median if k.startswith("recall") and median[k] < medians["best-first"][k]
        ]
        if name != "best-first" and behind:
            print(f"{name} behind best-first at {', '.join(behind)}")


if __name__ == "__main__":
    asyncio.run(main())
