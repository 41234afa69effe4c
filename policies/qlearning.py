"""Q-learning over restless bandits for the frontier (O'Meara & Patel, eq. 9-11).

Every known URL is an arm. Fetching it earns the reward of eq. (11) and reveals the
children no other fetch had revealed; eq. (10) learns

    Q(x_i, fetch) := (1 - a) Q(x_i, fetch) + a (g + gamma sum_{j new child of i} Q(x_j, fetch))

(the arm's own next term, re-fetching a page, is zero on a graph that does not change).
The frontier's priority is the Whittle index Q(x, fetch) - Q(x, wait) of eq. (9). A page
is fetched once and is then worth nothing, and waiting earns nothing and leaves its state
as it is; for such an arm the subsidy for passivity that makes waiting as good as
fetching is Q(x, fetch) itself, so the index is Q(x, fetch).

Two representations of the local state x:
- `DiscovererTable`, the paper's: the identity of the page that discovered the URL (with
  the URL's own, as each arm has its own values), learned over repeated traversals of
  one graph;
- `LinkContextModel` (`policies/link_model.py`), which generalises within one crawl:
  the words around the link (anchor, URL, the text beside it, the parent's title and
  headings), its host, its parent's relevance and its depth, hashed, with Q linear in
  them and learned online from eq. (10)'s targets. With approximation the children of
  a page share values with the page, so a page revealing ten children worth as much as
  itself would be worth more than ten of itself: the sum diverges. A revealed child is
  therefore counted by what it adds over the fetches the crawler can make anyway (the
  running value of what it fetches), the subsidy of Whittle's relaxation.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import zipfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace

import numpy as np

from policies.exploration_budget import ExplorationBudget
from policies.frontier import Candidate, LinkContext, PriorityFrontier
from policies.link_families import LinkFamilies
from policies.link_model import LinkContextModel, Row, link_tokens
from policies.npz import is_npz, npz_bytes
from policies.relevance import DEFAULT_LINK_TEXT_WEIGHT
from policies.row_store import RowStore
from policies.site_values import SectionSkill, SiteValues, section_of

# the sections' weight follows their skill in steps of this: each step ranks every
# section again (`PriorityFrontier.refresh_all`)
SKILL_STEP = 0.005
# a raised family goes back to its own estimates after this many of its raised pages in
# a row were not relevant and revealed no new link. A table of contents' chapter pages
# reveal nothing new where its part pages reveal the sections (PostgreSQL's root: up
# to 24 chapters between two parts); a family that never leads on costs this many pages,
# not its whole size (docs/frontier.md)
RELATIVES_LOWERED_AFTER = 30


def first_fetch_reward(relevance: float) -> float:
    """Eq. (11), the first retrieval: the page's relevance."""
    return relevance


def refetch_reward(old: float, new: float | None) -> float:
    """Eq. (11) for a page fetched again: max(old, new) if it changed, its old relevance
    if it is gone (`new` None)."""
    return old if new is None else max(old, new)


@dataclass(frozen=True, slots=True)
class LearningSettings:
    gamma: float = 0.5  # discount of what a fetch reveals
    step: float = 0.5  # a: the step size, decreasing as step / visits**step_decay
    step_decay: float = 0.5
    epsilon: float = 0.1  # the chance of fetching a random known URL instead of the best
    epsilon_decay: float = 0.9  # each traversal multiplies epsilon by this

    def __post_init__(self) -> None:
        checks = {
            "gamma": 0 <= self.gamma < 1,
            "step": 0 < self.step <= 1,
            "step_decay": 0 <= self.step_decay <= 1,
            "epsilon": 0 <= self.epsilon <= 1,
            "epsilon_decay": 0 <= self.epsilon_decay <= 1,
        }
        for name, ok in checks.items():
            if not ok:
                raise ValueError(f"learning setting {name}={getattr(self, name)} is out of range")

    def epsilon_at(self, traversal: int) -> float:
        return self.epsilon * self.epsilon_decay**traversal


class DiscovererTable:
    """Q(x, fetch) by (page, the page that discovered it), all zero at first (Section 6)."""

    def __init__(self, settings: LearningSettings) -> None:
        self.settings = settings
        self._values: dict[tuple[int, int], float] = {}
        self._visits: dict[tuple[int, int], int] = {}

    def __len__(self) -> int:
        return len(self._values)

    def index(self, page: int, discoverer: int) -> float:
        return self._values.get((page, discoverer), 0.0)

    def update(self, page: int, discoverer: int, reward: float, revealed: float) -> None:
        """Eq. (10) after fetching `page`; `revealed` sums its new children's values."""
        key = (page, discoverer)
        visits = self._visits.get(key, 0) + 1
        self._visits[key] = visits
        s = self.settings
        step = s.step / visits**s.step_decay
        old = self._values.get(key, 0.0)
        self._values[key] = (1 - step) * old + step * (reward + s.gamma * revealed)


# -- the live frontier --------------------------------------------------------------


class QLearningFrontier(PriorityFrontier):
    """The live frontier ordered by the learned index of eq. (9)-(10) with the link's
    context as its state (`LinkContextModel`).

    After each fetch the fetched link is learned towards eq. (10)'s target: its reward
    and the discounted value its fetch revealed. A revealed child is counted by what it
    adds over the fetches the crawler can make anyway (the running value of what it
    takes from the frontier, the subsidy of Whittle's relaxation), and only the best
    `horizon` of them: with a generalising state the children share values with their
    parent, and a page revealing many links would otherwise be worth unboundedly much.
    Untrained, or where its estimates are not confident, a link's own index is
    best-first's estimate. Each URL's index gains the value of its section of the host
    (the first segment of its path): the mean reward of the section's pages and an
    optimism for the sections barely tried (`SiteValues`), so that no part of a site is
    left untried because its first links promise nothing, weighed by the sections'
    skill: how much better a section's mean predicts its pages' rewards than their
    links' scores do (`SectionSkill`; zero until shown, so the sections move nothing
    before). Hosts compete with that and
    an optimism for the hosts barely tried, so that no host is left untried either. The
    sections are the groups of a host's queue (`PriorityFrontier.group_of`): a
    section's value, moved by each try and fetch there, moves all its URLs at once.
    It is patient (`patience` 0.5): a URL is left waiting while a busy host holds one
    ranked more than twice as high. This is Whittle's relaxation, which the paper's index
    policy comes from: m projects active on average rather than exactly m at each step,
    with a subsidy for passivity; here an arm stays passive when its index is below
    half that of an arm politeness keeps from being activated now, and the slot goes to
    that arm when its host's turn comes. Only a host whose last pages earned more than
    the crawl's pages do is waited for (running rewards, of the host's fetches and of
    all, with the subsidy's memory): its links' promise alone does not keep a slot
    idle. And the best ready URL is fetched all the same when its host was tried fewer
    than `patient_after` times. On the real web, waiting for a host whose links named
    the topic (Octave's, on matrices) kept SciPy's, whose first links name nothing,
    untried for hundreds of pages on "sparse matrix".
    The optimism is what takes the order away from best-first's before anything is
    learned, so it is used only while the crawl can afford it (`ExplorationBudget`, a
    conservative bandit's): from the hundredth page fetched in best-first's order on,
    and while the pages' rewards stay within 0.1 of what that order earns. Until then,
    and whenever tries of the barely tried have used the budget up, the frontier orders
    as best-first with the link model's and the sections' confident corrections; from
    the warmup's end on it is then patient only where the hosts' own pages show it
    pays: for a host tried `patient_after` times whose last pages earned at least as
    much as the ready host's. While the budget affords exploring it also waits for a
    busy host barely tried, or one whose pages earned less than the ready host's but
    more than the crawl's.
    The model learns a batch of fetches at a time; after each batch in which it
    corrects the links' own indexes (its skill above zero), the queue is re-ranked
    `rerank_budget` URLs at a time (a few hosts whole, or a slice of one that holds more
    than twice as many), so the cost per fetch is flat whatever the frontier's size and
    a large queue is re-ranked over many batches (100,000 URLs over some 100); once it
    stops correcting them, the hosts holding corrected indexes are re-ranked once more.
    A frontier spilled to storage comes back by this index too (`refill_order`).
    A page at the crawl's relevance threshold (`relevant_at`) raises the queued links its
    discoverer revealed with it, and with `relative_levels` 2 (the default; 1, or 0 for
    none) those its discoverer was revealed with (`LinkFamilies`): the pages beside a
    relevant one, worth more than their words say before what lies beyond them is
    seen. A family whose raised pages stop paying, `relatives_lowered_after` in a row
    neither relevant nor revealing a new link (with `relatives_kept_by_relevance` False:
    not revealing one), goes back to its own estimates. The
    warmup's relevant pages raise theirs when it ends, so that its pages are
    best-first's. The raise is in memory: a URL spilled and read back, or queued when
    the crawl resumed, ranks by its stored estimate.
    """

    name = "qlearning"
    section_of = staticmethod(section_of)  # the arm within a host that a URL belongs to
    default_patience = 0.5
    reads_link_context = True  # the link model's features: anchor, block, parent's headings

    def __init__(
        self,
        settings: LearningSettings | None = None,
        *,
        horizon: int = 10,
        rerank_budget: int = 1_000,
        subsidy_memory: float = 0.9,
        patience: float | None = None,
        patient_after: int = 3,
        model: LinkContextModel | None = None,
        host_values: SiteValues | None = None,
        section_values: SiteValues | None = None,
        section_skill: SectionSkill | None = None,
        budget: ExplorationBudget | None = None,
        relevant_at: float = 0.1,
        relative_levels: int = 2,
        relatives_lowered_after: int | None = RELATIVES_LOWERED_AFTER,
        relatives_kept_by_relevance: bool = True,
        families: LinkFamilies | None = None,
    ) -> None:
        super().__init__(patience=patience, relevant_at=relevant_at)
        if relative_levels < 0:
            raise ValueError(f"a frontier's relative_levels is 0 or more, not {relative_levels}")
        if relatives_lowered_after is not None and relatives_lowered_after < 1:
            raise ValueError(
                "a frontier's relatives_lowered_after is 1 or more, or None, not "
                f"{relatives_lowered_after}"
            )
        self.settings = settings or LearningSettings()
        self.model = model or LinkContextModel()
        # a host brings its optimism only: what its pages earned is counted once, by the
        # sections they are in (a host's mean added too would count them twice, and keep
        # a crawl on the host of one rich section long after that section is exhausted)
        self.host_values = host_values or SiteValues(weight=0.0)
        self.section_values = section_values or SiteValues()
        self.section_skill = section_skill or SectionSkill()
        # the optimism, and patience beyond what the hosts' pages show, only while the
        # crawl's pages earn enough
        self.budget = budget or ExplorationBudget()
        self._explore(self.budget.exploring)
        # the sections' values weigh this much: the skill as of the last time every
        # section was ranked again (each time it moved by SKILL_STEP)
        self.section_weight = 0.0
        self.horizon, self.rerank_budget = horizon, rerank_budget
        self.subsidy_memory = subsidy_memory
        self.patient_after = patient_after
        self.subsidy = 0.0  # running value of what is fetched: the opportunity cost
        self.reward_rate = 0.0  # running reward of the crawl's fetches
        # running reward of each host's fetches; not saved: a resumed crawl's first
        # fetches rebuild it, and until then no host is waited for
        self._recent_reward: dict[str, float] = {}
        # by queued URL id: its link's features, labelled with its section's number
        self._features = RowStore()
        self._section_numbers: dict[str, int] = {}
        self._sections: list[str] = []  # by number
        # the last fetch's new links, not yet pushed: (features, index), and whether the
        # model corrected their indexes
        self._children: dict[int, tuple[Row, float]] = {}
        self._children_corrected = False
        self._rerank_queue: list[str] = []  # hosts left to re-rank in this round
        # hosts whose queue holds indexes the model corrected, to rank again when it stops
        # (a dict: re-ranked in the order they came, whatever the strings' hashes)
        self._corrected_hosts: dict[str, None] = {}
        self._corrected_in_round: set[str] = set()  # hosts re-ranked in part, corrected
        # which recent fetch revealed which links, for the raise of a relevant page's
        # relatives; the warmup's relevant pages, raising theirs once it ends
        self.families = families if families is not None else LinkFamilies()
        self._held_back: list[tuple[int, float]] = []
        # a relevant page raises the links its discoverer revealed with it (1), and those
        # its discoverer was revealed with (2, the default); 0: none
        self.relative_levels = relative_levels
        # a raised family's links go back to their own estimates once this many of its
        # raised links in a row were fetched to no relevant page and no new link (None:
        # never)
        self.relatives_lowered_after = relatives_lowered_after
        # a raised page at `relevant_at` starts its family's misses again, as one that
        # leads on does; False: only one that leads on, and a relevant one raises the
        # family again until its next miss
        self.relatives_kept_by_relevance = relatives_kept_by_relevance
        self._raised: dict[int, tuple[float, float]] = {}  # raised link -> (own, raised)
        self._misses: dict[int, int] = {}  # a raised family's revealer -> misses in a row

    # -- ranking ---------------------------------------------------------------------

    def _describe(
        self, links: Sequence[Candidate], parent_relevance: float | None = None
    ) -> list[Row]:
        """Features of links; a link without context (a seed, a URL read back from
        storage) is described by its URL, host, depth and stored parent relevance."""
        tokens = []
        for link in links:
            context = link.context or LinkContext()
            parent = link.parent_relevance if parent_relevance is None else parent_relevance
            tokens.append(
                link_tokens(
                    url=link.url,
                    host=link.host,
                    depth=link.depth,
                    anchor=context.anchor,
                    around=context.around,
                    parent_title=context.parent_title,
                    parent_relevance=parent,
                )
            )
        return self.model.features(tokens)

    def _row(self, candidate: Candidate) -> Row:
        row = self._features.get(candidate.url_id)
        if row is None:
            row = self._describe([candidate])[0]
            self._hold(candidate.url_id, row, self.section_of(candidate.url))
        return row

    def _hold(self, url_id: int, row: Row, section: str) -> None:
        number = self._section_numbers.get(section)
        if number is None:
            number = self._section_numbers[section] = len(self._sections)
            self._sections.append(section)
        self._features.put(url_id, row, label=number)

    def push(self, candidate: Candidate) -> None:
        """Queued without its link's words once their features are held: the words are
        read once, and a queued link kept some 190 bytes of them (the million-page
        testbed's, the words a link shares with its siblings counted once)."""
        if candidate.context is not None:
            if candidate.url_id not in self._children and candidate.url_id not in self._features:
                self._row(candidate)  # described while its words are at hand
            candidate = replace(candidate, context=None)
        super().push(candidate)

    def push_many(self, candidates: Sequence[Candidate]) -> None:
        """Links without features yet (a refill's) described together first: one by one,
        each pays the feature hasher's overhead (a refill of 10,000 links read back,
        measured by `git show 810f12e:bench/refill_cost.py`: 1.23 s of CPU against 0.99)."""
        fresh = [
            candidate
            for candidate in candidates
            if not candidate.revisit
            and candidate.url_id not in self._features
            and candidate.url_id not in self._children
        ]
        for candidate, row in zip(fresh, self._describe(fresh), strict=True):
            self._hold(candidate.url_id, row, self.section_of(candidate.url))
        super().push_many(candidates)

    def group_of(self, candidate: Candidate) -> str:
        return self.section_of(candidate.url)

    def group_bonus(self, group: str) -> float:
        return self.section_index(group)

    def section_index(self, section: str) -> float:
        """What every URL of `section` gains: its value, weighed by the sections' skill."""
        return self.section_weight * self.section_values.index(section)

    def own_priority(self, candidate: Candidate) -> float:
        """A link's own index: best-first's score, moved by the model's confident
        correction."""
        child = self._children.pop(candidate.url_id, None)
        if child is not None:  # described, and valued, with its siblings
            self._hold(candidate.url_id, child[0], self.section_of(candidate.url))
            if self._children_corrected:
                self._corrected_hosts[candidate.host] = None
            return child[1]
        if self.model.skill() > 0.0:
            self._corrected_hosts[candidate.host] = None
        return float(self.model.index([self._row(candidate)], [candidate.score])[0])

    def priority(self, candidate: Candidate) -> float:
        return self.own_priority(candidate) + self.section_index(self.section_of(candidate.url))

    def priorities(self, candidates: Sequence[Candidate]) -> np.ndarray:
        """The index of queued candidates, or of candidates not queued (a refill choosing
        among stored URLs) without remembering anything of them: each link's own and
        its section's."""
        if not candidates:
            return np.zeros(0)
        scores = _scores(candidates)
        skilled = self.model.skill() > 0.0
        held = self._held_indexes([c.url_id for c in candidates], scores, skilled)
        if held is not None:
            own, sections = held
            return own + self._section_indexes_by_number(sections)
        return self._link_indexes(candidates, scores, skilled) + self._section_indexes(candidates)

    def own_priorities(self, candidates: Sequence[Candidate]) -> np.ndarray:
        """The own indexes of queued candidates: their scores while the model corrects
        nothing."""
        scores = _scores(candidates)
        if not candidates or self.model.skill() == 0.0:
            return scores
        held = self._held_indexes([c.url_id for c in candidates], scores, skilled=True)
        return held[0] if held is not None else self._link_indexes(candidates, scores, True)

    def _link_indexes(
        self, candidates: Sequence[Candidate], scores: np.ndarray, skilled: bool
    ) -> np.ndarray:
        """The own indexes of candidates, those not held described first."""
        if not skilled:  # best-first's order, without describing anything
            return scores
        unknown = [c for c in candidates if c.url_id not in self._features]
        described = dict(zip((c.url_id for c in unknown), self._describe(unknown), strict=True))
        rows = [self._features.get(c.url_id) or described[c.url_id] for c in candidates]
        return self.model.index(rows, scores)

    def _held_indexes(
        self, url_ids: list[int], scores: np.ndarray, skilled: bool
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """The own indexes of queued candidates and their sections' numbers, from the rows
        held for them; None if some are not held."""
        try:
            if not skilled:  # best-first's order
                return scores, self._features.labels(url_ids)
            indices, values, lengths, labels = self._features.gather(url_ids)
        except KeyError:
            return None
        return self.model.index_stacked(indices, values, lengths, scores), labels

    def _section_indexes_by_number(self, numbers: np.ndarray) -> np.ndarray:
        """The indexes of sections by their numbers, each section's computed once."""
        distinct, positions = np.unique(numbers, return_inverse=True)
        index, sections = self.section_index, self._sections
        return np.array([index(sections[number]) for number in distinct.tolist()])[positions]

    def _section_indexes(self, candidates: Sequence[Candidate]) -> np.ndarray:
        """Each candidate's section's index, computed once a section."""
        index = self.section_index
        known: dict[str, float] = {}
        values = np.empty(len(candidates))
        for i, candidate in enumerate(candidates):
            section = self.section_of(candidate.url)
            value = known.get(section)
            if value is None:
                value = known[section] = index(section)
            values[i] = value
        return values

    def host_bonus(self, host: str) -> float:
        return self.host_values.index(host)

    def _worth_waiting(
        self, host: str, rank: float, awaited_host: str, awaited_rank: float
    ) -> bool:
        """A host barely tried is not kept waiting: its first links may promise nothing
        and lead to the best pages (the optimism of `SiteValues`). Nor is any host kept
        waiting for one whose last pages earned less than the crawl's pages do. The
        warmup's pages are best-first's: none waits. After them, while the budget does
        not afford exploring, a slot waits only where the hosts' own pages show it pays,
        for a host tried `patient_after` times whose last pages earned at least as much
        as the ready host's."""
        tries = self.host_values.tries
        if self.budget.warming_up or tries(host) < self.patient_after:
            return False
        recent = self._recent_reward.get(awaited_host)
        if recent is None or recent < self.reward_rate:
            return False
        if not self.budget.exploring and (
            tries(awaited_host) < self.patient_after or recent < self._recent_reward.get(host, 0.0)
        ):
            return False
        return super()._worth_waiting(host, rank, awaited_host, awaited_rank)

    def pop(
        self,
        is_ready: Callable[[str], bool],
        turn_comes: Callable[[str], bool] | None = None,
    ) -> Candidate | None:
        candidate = super().pop(is_ready, turn_comes)
        if candidate is not None and not candidate.revisit:
            section = self.section_of(candidate.url)
            self.host_values.tried(candidate.host)
            self.section_values.tried(section)
            self.budget.taken(candidate.url_id)
            self.refresh_group(candidate.host, section)
            value = float(self.model.values([self._row(candidate)], [candidate.score])[0])
            m = self.subsidy_memory
            self.subsidy = m * self.subsidy + (1 - m) * value
        return candidate

    def forget(self, candidate: Candidate) -> None:
        self._features.pop(candidate.url_id)
        self.budget.forget(candidate.url_id)

    def drop_host(self, host: str) -> list[Candidate]:
        dropped = super().drop_host(host)
        for candidate in dropped:
            self._features.pop(candidate.url_id)
        self._corrected_hosts.pop(host, None)
        self._corrected_in_round.discard(host)
        return dropped

    def reprioritize_slice(self, host: str, limit: int) -> tuple[int, bool]:
        """As the frontier's; a host leaves the hosts holding corrected indexes once a
        whole round of it was re-ranked uncorrected."""
        corrected = self.model.skill() > 0.0
        ranked, done = super().reprioritize_slice(host, limit)
        if corrected and ranked:
            self._corrected_hosts[host] = None
            self._corrected_in_round.add(host)
        if done:
            if host not in self._corrected_in_round:
                self._corrected_hosts.pop(host, None)
            self._corrected_in_round.discard(host)
        return ranked, done

    @property
    def described(self) -> int:
        """Links whose features are held: those queued, and those taken and not yet
        learned from."""
        return len(self._features)

    def _rerank_some(self) -> None:
        """Re-rank hosts' queues in turn, up to `rerank_budget` URLs (a slice of a host
        that holds more than twice as many, the rest in the next calls; a smaller host
        whole, in place, which costs half as much a URL), where the model's estimates move
        the links' own indexes: every host's while it corrects them, then those holding
        corrected indexes. Uncorrected, a link's own index is its score, and the
        sections' values move their links without re-ranking."""
        budget = self.rerank_budget
        correcting = self.model.skill() > 0.0
        started_round = False  # a queue smaller than the budget is re-ranked once
        while budget > 0:
            if not self._rerank_queue:
                if started_round:
                    return
                hosts = self.hosts() if correcting else iter(self._corrected_hosts)
                self._rerank_queue = sorted(hosts, key=len)
                started_round = True
                if not self._rerank_queue:
                    return
            host = self._rerank_queue[-1]
            done = True
            if correcting or host in self._corrected_hosts:
                size = self.host_size(host)  # whole, within twice the budget: it costs less
                limit = budget if size > 2 * self.rerank_budget else max(budget, size)
                ranked, done = self.reprioritize_slice(host, limit)
                budget -= ranked
            if done:
                self._rerank_queue.pop()

    # -- learning --------------------------------------------------------------------

    def on_fetched(
        self, candidate: Candidate, relevance: float, children: Sequence[Candidate]
    ) -> None:
        """Eq. (10) for the fetched page; describes its new links before they are pushed."""
        self._children.clear()
        if candidate.revisit:  # re-visits are the re-visit scheduler's, not discoveries
            return
        reward = first_fetch_reward(relevance)
        self.host_values.fetched(candidate.host, reward)
        section = self.section_of(candidate.url)
        if candidate.depth > 0:  # a link's page, not a seed: its score estimated it
            by_section = self.section_values.mean(section)
            self.section_skill.learn(by_section, candidate.score, reward)
        self.section_values.fetched(section, reward)
        self._weigh_sections()
        if self.budget.fetched(candidate.url_id, reward):
            self._explore(self.budget.exploring)
            self.refresh_all()
        m = self.subsidy_memory
        self.reward_rate = m * self.reward_rate + (1 - m) * reward
        before = self._recent_reward.get(candidate.host, reward)
        self._recent_reward[candidate.host] = m * before + (1 - m) * reward
        self.refresh_group(candidate.host, section)
        row = self._features.pop(candidate.url_id) or self._describe([candidate])[0]
        revealed = 0.0
        self._children_corrected = self.model.skill() > 0.0
        if children:
            described = self._describe(children, parent_relevance=relevance)
            scores = np.array([child.score for child in children])
            indices = self.model.index(described, scores)
            offset, slope = self.model.calibration()
            gains = np.maximum(0.0, offset + slope * indices - self.subsidy)
            revealed = float(np.sort(gains)[-self.horizon :].sum())
            self._children = {
                child.url_id: (features, index)
                for child, features, index in zip(
                    children, described, indices.tolist(), strict=True
                )
            }
        target = reward + self.settings.gamma * revealed
        refits = self.model.refits_
        self.model.update(row, candidate.score, target)
        if self.model.refits_ > refits:  # the model moved: re-rank a share of the queue
            self._rerank_some()
        if self.relative_levels:
            self._count_miss(candidate.url_id, relevance, bool(children))
            self.families.revealed(candidate.url_id, [child.url_id for child in children])
            self._raise_relatives_of(candidate.url_id, relevance)

    def _raise_relatives_of(self, url_id: int, relevance: float) -> None:
        """A relevant page raises its relatives; while the warmup's pages come in it
        holds them back, so that those pages are best-first's, and raises them all once
        the warmup ends: the queue is then as if raised from the first page."""
        warming_up = self.budget.warming_up
        if self._held_back and not warming_up:
            held, self._held_back = self._held_back, []
            for page, earned in held:
                self._raise_relatives(page, earned)
        if not self.is_relevant(relevance):
            return
        if warming_up:
            self._held_back.append((url_id, relevance))
        else:
            self._raise_relatives(url_id, relevance)

    def _raise_relatives(self, url_id: int, relevance: float) -> None:
        """Eq. (10)'s discounted value, seen from the other side: a relevant page's
        reward is part of what its discoverer's fetch revealed, so each other link that
        fetch revealed is worth at least gamma times that reward, counted as a link's
        estimate counts its parent's relevance (0.3 of it), and each link revealed with
        its discoverer gamma squared times it. Raised, never lowered here; with
        `relatives_lowered_after`, lowered again once the family's raised pages miss
        (`_count_miss`)."""
        share = (1.0 - DEFAULT_LINK_TEXT_WEIGHT) * relevance
        revealer = self.families.revealer_of(url_id)
        for level, links in self.families.relatives(url_id, levels=self.relative_levels):
            score = self.settings.gamma**level * share
            for link in links.tolist():
                queued = self.queued_score(link)
                if queued is None or queued >= score:
                    continue
                self.rescore(link, score)
                if self.relatives_lowered_after is not None:
                    own = self._raised.get(link, (queued, score))[0]
                    self._raised[link] = (own, score)
            if self.relatives_lowered_after is not None and revealer is not None:
                if self.relatives_kept_by_relevance:
                    self._misses[revealer] = 0
                else:
                    self._misses.setdefault(revealer, 0)
                revealer = self.families.revealer_of(revealer)
        if len(self._raised) > 2 * self.families.capacity:
            self._forget_unheld_raises()

    def _count_miss(self, url_id: int, relevance: float, revealed_links: bool) -> None:
        """A raised link's page was not relevant and revealed no new link: one more miss
        for its family (not relevant is not asked with `relatives_kept_by_relevance`
        False); at `relatives_lowered_after` in a row, the family's links still queued
        at their raise go back to their own estimates."""
        if self._raised.pop(url_id, None) is None:
            return
        revealer = self.families.revealer_of(url_id)
        if revealer is None or revealer not in self._misses:
            return
        if revealed_links or (self.is_relevant(relevance) and self.relatives_kept_by_relevance):
            self._misses[revealer] = 0
            return
        self._misses[revealer] += 1
        assert self.relatives_lowered_after is not None
        family = self.families.family(revealer)
        if self._misses[revealer] < self.relatives_lowered_after or family is None:
            return
        if self.relatives_kept_by_relevance:
            del self._misses[revealer]  # a new raise counts from none
        for link in family.tolist():
            own, raised = self._raised.pop(link, (None, None))
            if own is not None and self.queued_score(link) == raised:  # not raised since
                self.rescore(link, own)

    def _forget_unheld_raises(self) -> None:
        """Forget the raises of families no longer held (`LinkFamilies` drops the
        oldest): they can no longer be lowered, and a long crawl would pile them up. It
        leaves at most the links held, about `capacity`, so it runs at most once in
        `capacity` raises."""
        self._raised = {
            link: scores
            for link, scores in self._raised.items()
            if self.families.revealer_of(link) is not None
        }
        self._misses = {
            page: misses
            for page, misses in self._misses.items()
            if self.families.family(page) is not None
        }

    def _explore(self, on: bool) -> None:
        self.host_values.explore(on)
        self.section_values.explore(on)

    def _weigh_sections(self) -> None:
        """Weigh the sections by their skill as it is now, once it moved by SKILL_STEP:
        every section is then ranked again, its URLs unmoved within it."""
        skill = self.section_skill.value()
        if abs(skill - self.section_weight) >= SKILL_STEP:
            self.section_weight = skill
            self.refresh_all()

    # -- saving ----------------------------------------------------------------------

    def get_state(self) -> bytes:
        """An .npz archive: the model's arrays, and the subsidy and the hosts' and
        sections' values as JSON in an array of bytes. A state of JSON alone, as saved
        before, is read too (`_read_state`)."""
        rest = {
            "subsidy": self.subsidy,
            "hosts": self.host_values.get_state(),
            "sections": self.section_values.get_state(),
            "section_skill": self.section_skill.get_state(),
            "exploration_budget": self.budget.get_state(),
        }
        return npz_bytes(
            **self.model.get_state(),
            rest=np.frombuffer(json.dumps(rest).encode(), dtype=np.uint8),
        )

    def set_state(self, blob: bytes) -> None:
        model, subsidy, hosts, sections, skill, budget = self._read_state(blob)
        with _unreadable():
            self.model.set_state(model)
            self.host_values.set_state(hosts)
            self.section_values.set_state(sections)
            self.section_skill.set_state(skill)
            if budget is not None:
                self.budget.set_state(budget)
        self._explore(self.budget.exploring)
        self.subsidy = subsidy
        self.section_weight = self.section_skill.value()
        self.refresh_all()

    def merge(self, states: Sequence[bytes]) -> None:
        """Parameter mixing with other daemons' models (`LinkContextModel.merge`); the
        subsidy becomes their average weighted by each model's updates. Host values stay
        this daemon's own, and so do the sections' and the exploration budget: the hosts
        it fetches are its own, by their leases."""
        saved = [self._read_state(blob)[:2] for blob in states]
        with _unreadable():
            updates = [self.model.own_updates] + [int(model["updates"][0]) for model, _ in saved]
            self.model.merge([model for model, _ in saved])
        if sum(updates) > 0:
            subsidies = [self.subsidy] + [subsidy for _, subsidy in saved]
            self.subsidy = float(np.average(subsidies, weights=updates))

    @staticmethod
    def _read_state(
        blob: bytes,
    ) -> tuple[
        dict[str, np.ndarray],
        float,
        dict[str, list[float]],
        dict[str, list[float]],
        list[float],
        list[float] | None,
    ]:
        """The model's state, the subsidy, the hosts' values, the sections', their skill
        and the exploration budget (none in a state saved before they were kept: they
        start untried, unskilled, the budget unspent)."""
        with _unreadable():
            if is_npz(blob):
                with np.load(io.BytesIO(blob), allow_pickle=False) as saved:
                    model = {name: saved[name] for name in saved.files if name != "rest"}
                    state = json.loads(saved["rest"].tobytes())
            else:  # JSON alone, as saved before the .npz: its model as lists
                state = json.loads(blob)
                saved_model = state["model"]
                model = {
                    "weight_columns": np.asarray(saved_model["weights"][0]),
                    "weights": np.asarray(saved_model["weights"][1]),
                    "count_columns": np.asarray(saved_model["counts"][0]),
                    "counts": np.asarray(saved_model["counts"][1]),
                    "calibration": np.asarray(saved_model["calibration"]),
                    "errors": np.asarray(saved_model["errors"]),
                    "updates": np.array([int(saved_model["updates"])]),
                }
            subsidy = float(state["subsidy"])
            hosts, sections = state.get("hosts", {}), state.get("sections", {})
            skill = state.get("section_skill", [0.0] * 8)
            budget = state.get("exploration_budget")
        if not math.isfinite(subsidy):
            raise ValueError("saved Q-learning frontier state has a non-finite subsidy")
        return model, subsidy, hosts, sections, skill, budget


def _scores(candidates: Sequence[Candidate]) -> np.ndarray:
    return np.fromiter((c.score for c in candidates), dtype=np.float64, count=len(candidates))


@contextlib.contextmanager
def _unreadable() -> Iterator[None]:
    try:
        yield
    except (ValueError, KeyError, TypeError, OSError, EOFError, zipfile.BadZipFile) as error:
        raise ValueError(f"saved Q-learning frontier state is unreadable: {error}") from None
