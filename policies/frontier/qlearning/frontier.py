"""Q-learning over restless bandits for the frontier (O'Meara & Patel, eq. 8-11).

Every known URL is an arm, with two controls: fetch (1) and wait (2). Watkins'
Q-learning (eq. 8) learns Q(x, u) from samples; for a crawl, eq. (10) adds the children
a fetch reveals, those no other fetch had revealed:

    Q(x_i, 1) := (1 - a) Q(x_i, 1) + a (g + gamma sum_{j new child of i} Q(x_j, 1))

(the arm's own next term, re-fetching a page, is zero on a graph that does not change),
with the reward g of eq. (11): a page's relevance on its first fetch (`table`). The
priority is Whittle's index of eq. (9), Q(x, 1) - Q(x, 2). A page is fetched once and is
then worth nothing, and waiting earns nothing and leaves its state as it is; for such an
arm the subsidy for passivity that makes waiting as good as fetching is Q(x, 1) itself,
so the index is Q(x, 1). Quality is eq. (1)-(3) (`policies.offline.quality`).

The state x is the link's context (`link_model`), which generalises within one crawl,
where the paper's is the page that discovered the URL (`table`). The children of a page
then share values with it, and the sum of eq. (10) diverges; a revealed child is counted
by what it adds over the subsidy of Whittle's relaxation, the running value of what the
crawler fetches anyway.

The live frontier, `QLearningFrontier`, is that model with the parts it is composed of:
the held links' features (`HeldLinks`), the hosts' and sections' values (`SiteValues`,
`SectionSkill`), the budget for exploring (`ExplorationBudget`) and the raise of a
relevant page's relatives (`Relatives`), under one settings object
(`QLearningSettings`). What it learns is in attributes ending in `_`; what it saves is
`SavedFrontier`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np

from policies.frontier.candidate import Candidate
from policies.frontier.priority import PriorityFrontier
from policies.frontier.qlearning.exploration_budget import ExplorationBudget
from policies.frontier.qlearning.held_links import HeldLinks, scores_of
from policies.frontier.qlearning.link_families import LinkFamilies
from policies.frontier.qlearning.link_model import LinkContextModel, Row
from policies.frontier.qlearning.relatives import Relatives
from policies.frontier.qlearning.reranking import Reranking
from policies.frontier.qlearning.saved import SavedFrontier, merge_models
from policies.frontier.qlearning.settings import QLearningSettings
from policies.frontier.qlearning.site_values import SectionSkill, SiteValues, section_of
from policies.frontier.qlearning.table import first_fetch_reward

# the sections' weight follows their skill in steps of this: each step ranks every
# section again (`PriorityFrontier.refresh_all`)
SKILL_STEP = 0.005


class QLearningFrontier(PriorityFrontier):
    """The live frontier ordered by the learned index of eq. (9)-(10) with the link's
    context as its state (`LinkContextModel`).

    After each fetch the fetched link is learned towards eq. (10)'s target: its reward
    and the discounted value its fetch revealed, counting the best `horizon` children by
    what each adds over the subsidy. Untrained, or where its estimates are not
    confident, a link's own index is best-first's estimate. Each URL's index gains the
    value of its section of the host (the first segment of its path, a group of the
    host's queue): the mean reward of the section's pages and an optimism for the
    sections barely tried (`SiteValues`), so that no part of a site is left untried
    because its first links promise nothing, weighed by the sections' skill (how much
    better a section's mean predicts its pages' rewards than their links' scores do,
    `SectionSkill`: zero until shown). Hosts compete with that and an optimism for the
    hosts barely tried. The optimism is used only while the crawl can afford it
    (`ExplorationBudget`, a conservative bandit's).
    It is patient (`patience` 0.5): a URL is left waiting while a busy host holds one
    ranked more than twice as high. This is Whittle's relaxation, which the paper's index
    policy comes from: m projects active on average rather than exactly m at each step,
    with a subsidy for passivity; here an arm stays passive when its index is below
    half that of an arm politeness keeps from being activated now, and the slot goes to
    that arm when its host's turn comes. Only a host whose last pages earned more than
    the crawl's pages do is waited for (`_worth_waiting`): its links' promise alone does
    not keep a slot idle. On the real web, waiting for a host whose links named the
    topic (Octave's, on matrices) kept SciPy's, whose first links name nothing, untried
    for hundreds of pages on "sparse matrix".
    After each batch the model learns, the queue is re-ranked where it corrects the
    links' own indexes (`Reranking`). A frontier spilled to storage comes back by this
    index too. A relevant page raises its relatives (`Relatives`). Its settings are one
    `QLearningSettings`; its parts may be given, else each is built with its defaults.
    """

    name = "qlearning"
    section_of = staticmethod(section_of)  # the arm within a host that a URL belongs to
    default_patience = 0.5
    reads_link_context = True  # the link model's features: anchor, block, parent's headings

    def __init__(
        self,
        settings: QLearningSettings | None = None,
        *,
        model: LinkContextModel | None = None,
        host_values: SiteValues | None = None,
        section_values: SiteValues | None = None,
        section_skill: SectionSkill | None = None,
        budget: ExplorationBudget | None = None,
        families: LinkFamilies | None = None,
    ) -> None:
        self.settings = settings = settings or QLearningSettings()
        super().__init__(patience=settings.patience, relevant_at=settings.relevant_at)
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
        self.links = HeldLinks(self.model, self.section_of)  # by queued URL id
        self.relatives = Relatives(settings, families)
        self.reranking = Reranking(settings.rerank_budget)
        self._explore(self.budget.exploring)
        # the sections' values weigh this much: the skill as of the last time every
        # section was ranked again (each time it moved by SKILL_STEP)
        self.section_weight_ = 0.0
        self.subsidy_ = 0.0  # running value of what is fetched: the opportunity cost
        self.reward_rate_ = 0.0  # running reward of the crawl's fetches
        # running reward of each host's fetches; not saved: a resumed crawl's first
        # fetches rebuild it, and until then no host is waited for
        self.recent_reward_: dict[str, float] = {}
        # the last fetch's new links, not yet pushed: (features, index), and whether the
        # model corrected their indexes
        self._children: dict[int, tuple[Row, float]] = {}
        self._children_corrected = False

    # -- ranking ---------------------------------------------------------------------

    def push(self, candidate: Candidate) -> None:
        """Queued without its link's words once their features are held: the words are
        read once, and a queued link kept some 190 bytes of them (the million-page
        testbed's, the words a link shares with its siblings counted once)."""
        if candidate.context is not None:
            if candidate.url_id not in self._children and candidate.url_id not in self.links:
                self.links.row(candidate)  # described while its words are at hand
            candidate = replace(candidate, context=None)
        super().push(candidate)

    def push_many(self, candidates: Sequence[Candidate]) -> None:
        """Links without features yet (a refill's) described together first: one by one,
        each pays the feature hasher's overhead (a refill of 10,000 links read back,
        measured by `git show 810f12e:bench/refill_cost.py`: 1.23 s of CPU against 0.99)."""
        self.links.hold_many(
            [
                candidate
                for candidate in candidates
                if not candidate.revisit
                and candidate.url_id not in self.links
                and candidate.url_id not in self._children
            ]
        )
        super().push_many(candidates)

    def group_of(self, candidate: Candidate) -> str:
        return self.section_of(candidate.url)

    def group_bonus(self, group: str) -> float:
        return self.section_index(group)

    def section_index(self, section: str) -> float:
        """What every URL of `section` gains: its value, weighed by the sections' skill."""
        return self.section_weight_ * self.section_values.index(section)

    def own_priority(self, candidate: Candidate) -> float:
        """A link's own index: best-first's score, moved by the model's confident
        correction."""
        child = self._children.pop(candidate.url_id, None)
        if child is not None:  # described, and valued, with its siblings
            self.links.hold(candidate, child[0])
            if self._children_corrected:
                self.reranking.corrected(candidate.host)
            return child[1]
        if self.model.skill() > 0.0:
            self.reranking.corrected(candidate.host)
        return float(self.model.index([self.links.row(candidate)], [candidate.score])[0])

    def priority(self, candidate: Candidate) -> float:
        return self.own_priority(candidate) + self.section_index(self.section_of(candidate.url))

    def priorities(self, candidates: Sequence[Candidate]) -> np.ndarray:
        """The index of queued candidates, or of candidates not queued (a refill choosing
        among stored URLs) without remembering anything of them: each link's own and
        its section's."""
        return self.links.indexes(candidates, self.section_index)

    def own_priorities(self, candidates: Sequence[Candidate]) -> np.ndarray:
        """The own indexes of queued candidates: their scores while the model corrects
        nothing."""
        return self.links.own_indexes(candidates)

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
        tries, patient_after = self.host_values.tries, self.settings.patient_after
        if self.budget.warming_up or tries(host) < patient_after:
            return False
        recent = self.recent_reward_.get(awaited_host)
        if recent is None or recent < self.reward_rate_:
            return False
        if not self.budget.exploring and (
            tries(awaited_host) < patient_after or recent < self.recent_reward_.get(host, 0.0)
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
            value = float(self.model.values([self.links.row(candidate)], [candidate.score])[0])
            m = self.settings.subsidy_memory
            self.subsidy_ = m * self.subsidy_ + (1 - m) * value
        return candidate

    def forget(self, candidate: Candidate) -> None:
        self.links.pop(candidate.url_id)
        self.budget.forget(candidate.url_id)

    def drop_host(self, host: str) -> list[Candidate]:
        dropped = super().drop_host(host)
        for candidate in dropped:
            self.links.pop(candidate.url_id)
        self.reranking.drop(host)
        return dropped

    def reprioritize_slice(self, host: str, limit: int) -> tuple[int, bool]:
        corrected = self.model.skill() > 0.0
        ranked, done = super().reprioritize_slice(host, limit)
        self.reranking.sliced(host, corrected=corrected, ranked=ranked, done=done)
        return ranked, done

    @property
    def described(self) -> int:
        """Links whose features are held: those queued, and those taken and not yet
        learned from."""
        return len(self.links)

    # -- learning --------------------------------------------------------------------

    def on_fetched(
        self, candidate: Candidate, relevance: float, children: Sequence[Candidate]
    ) -> None:
        """Eq. (10) for the fetched page; describes its new links before they are pushed."""
        self._children.clear()
        if candidate.revisit:  # re-visits are the re-visit scheduler's, not discoveries
            return
        reward = first_fetch_reward(relevance)
        self._learn_site_values(candidate, reward)
        row = self.links.pop(candidate.url_id) or self.links.describe([candidate])[0]
        revealed = 0.0
        self._children_corrected = self.model.skill() > 0.0
        if children:
            described = self.links.describe(children, parent_relevance=relevance)
            indices = self.model.index(described, scores_of(children))
            offset, slope = self.model.calibration()
            gains = np.maximum(0.0, offset + slope * indices - self.subsidy_)
            revealed = float(np.sort(gains)[-self.settings.horizon :].sum())
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
            self.reranking.rerank_some(self, correcting=self.model.skill() > 0.0)
        self.relatives.fetched(
            self,
            candidate.url_id,
            relevance,
            [child.url_id for child in children],
            warming_up=self.budget.warming_up,
        )

    def _learn_site_values(self, candidate: Candidate, reward: float) -> None:
        """What a fetch earned, learned by its host, its section, the sections' skill,
        the exploration budget and the running rewards."""
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
        m = self.settings.subsidy_memory
        self.reward_rate_ = m * self.reward_rate_ + (1 - m) * reward
        before = self.recent_reward_.get(candidate.host, reward)
        self.recent_reward_[candidate.host] = m * before + (1 - m) * reward
        self.refresh_group(candidate.host, section)

    def _explore(self, on: bool) -> None:
        self.host_values.explore(on)
        self.section_values.explore(on)

    def _weigh_sections(self) -> None:
        """Weigh the sections by their skill as it is now, once it moved by SKILL_STEP:
        every section is then ranked again, its URLs unmoved within it."""
        skill = self.section_skill.value()
        if abs(skill - self.section_weight_) >= SKILL_STEP:
            self.section_weight_ = skill
            self.refresh_all()

    def get_state(self) -> bytes:
        """What it learned, as `SavedFrontier` writes it."""
        parts = (self.host_values, self.section_values, self.section_skill, self.budget)
        return SavedFrontier.of(self.model, self.subsidy_, *parts).to_bytes()

    def set_state(self, blob: bytes) -> None:
        parts = (self.host_values, self.section_values, self.section_skill, self.budget)
        saved = SavedFrontier.from_bytes(blob)
        saved.restore(self.model, *parts)
        self._explore(self.budget.exploring)
        self.subsidy_ = saved.subsidy
        self.section_weight_ = self.section_skill.value()
        self.refresh_all()

    def merge(self, states: Sequence[bytes]) -> None:
        """Parameter mixing with other daemons' models (`LinkContextModel.merge`); the
        subsidy becomes their average weighted by each model's updates. Host values stay
        this daemon's own, and so do the sections' and the exploration budget: the hosts
        it fetches are its own, by their leases."""
        self.subsidy_ = merge_models(self.model, self.subsidy_, states)
