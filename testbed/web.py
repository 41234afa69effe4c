"""A synthetic topical web with known relevance: the graph and its pages.

Pages belong to hosts. A minority are on the topic, grouped in clusters; each cluster
has a hub page with little content, as irrelevant as an off-topic page, that links to
every member. Members link within their cluster (and to its hub), so clusters meet
through hubs: a crawler that follows only relevant-looking links misses them. Off-topic
pages link mostly among their own subject, now and then to a hub (with a generic
anchor) and rarely straight to an on-topic page. Anchors of links to on-topic pages
often, not always, carry topic words. Text is rendered on request from the page's
seed, so a web of a million pages costs only its link arrays.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

TOPIC = "solar energy"
TOPIC_WORDS = [
    "solar",
    "energy",
    "photovoltaic",
    "panel",
    "panels",
    "inverter",
    "sunlight",
    "irradiance",
    "module",
    "cells",
    "silicon",
    "rooftop",
    "array",
    "kilowatt",
    "watt",
    "battery",
    "storage",
    "grid",
    "renewable",
    "installation",
    "efficiency",
    "tracker",
    "mounting",
    "string",
    "microinverter",
    "perovskite",
    "thinfilm",
    "wafer",
    "output",
    "generation",
    "sun",
    "radiation",
    "thermal",
    "collector",
    "concentrator",
    "feedin",
    "tariff",
    "netmetering",
    "charge",
    "controller",
    "monocrystalline",
    "polycrystalline",
    "bifacial",
    "yield",
]
OTHER_TOPICS = {
    "cooking": "recipe oven flour butter sugar bake simmer garlic onion pepper salt sauce "
    "pasta dough whisk skillet roast herbs broth vinegar dessert dinner kitchen",
    "football": "goal striker midfield keeper league match referee penalty coach squad "
    "season tackle pitch transfer fixture derby cup championship defender winger",
    "astronomy": "galaxy telescope nebula comet orbit planet asteroid star cosmic "
    "supernova eclipse lunar crater spectrum observatory constellation quasar",
    "finance": "stock bond market equity dividend portfolio interest inflation bank "
    "credit loan mortgage yield investor fund broker hedge asset valuation",
    "gardening": "soil compost seedling prune mulch perennial bloom shrub fertilizer "
    "weed hedge bulb greenhouse harvest trowel orchard vegetable flower",
}
FILLER = [
    "people",
    "time",
    "year",
    "way",
    "day",
    "thing",
    "world",
    "life",
    "hand",
    "part",
    "place",
    "case",
    "week",
    "company",
    "system",
    "program",
    "question",
    "work",
    "government",
    "number",
    "night",
    "point",
    "home",
    "water",
    "room",
    "mother",
    "area",
    "money",
    "story",
    "fact",
    "month",
    "lot",
    "right",
    "study",
    "book",
    "eye",
    "job",
    "word",
    "business",
    "issue",
    "side",
    "kind",
    "head",
    "house",
    "service",
    "friend",
    "father",
    "power",
    "hour",
    "game",
    "line",
    "end",
    "member",
]
NAVIGATION = [
    "resources",
    "directory",
    "links",
    "index",
    "overview",
    "more",
    "guide",
    "list",
    "pages",
    "section",
]
GENERIC_ANCHORS = [
    "read",
    "more",
    "article",
    "continue",
    "details",
    "page",
    "here",
    "next",
    "see",
    "story",
]

HOME, OFF_TOPIC, ON_TOPIC, HUB, BROKEN = 0, 1, 2, 3, 4
TOPIC_NAMES = tuple(OTHER_TOPICS)
OTHER_VOCAB = {name: words.split() for name, words in OTHER_TOPICS.items()}


@dataclass(frozen=True, slots=True)
class WebSpec:
    seed: int = 0
    pages: int = 5000
    hosts: int = 6
    on_topic_fraction: float = 0.12
    cluster_size: int = 20
    broken_fraction: float = 0.01
    redirect_fraction: float = 0.02  # links that go through a redirect
    private_links: int = 3  # links from each home page into robots-disallowed /private/
    # hubs have little content: their relevance is as low as an off-topic page's
    hub_relevance: tuple[float, float] = (0.0, 0.05)
    cross_links: int = 0  # links from each on-topic page to on-topic pages of other clusters

    def __post_init__(self) -> None:
        if self.hosts < 1:
            raise ValueError("a testbed needs at least one host")
        if self.pages < 10 * self.hosts:
            raise ValueError(
                f"a testbed of {self.hosts} hosts needs at least {10 * self.hosts} pages"
            )


class TestbedWeb:
    __test__ = False  # not a pytest class

    def __init__(self, spec: WebSpec) -> None:
        self.spec = spec
        rng = np.random.default_rng(spec.seed)
        n, h = spec.pages, spec.hosts
        kind = np.full(n, OFF_TOPIC, dtype=np.int8)
        kind[:h] = HOME
        body = np.arange(h, n)
        rng.shuffle(body)
        n_on = int(len(body) * spec.on_topic_fraction)
        n_hubs = max(1, n_on // spec.cluster_size)
        n_broken = int(len(body) * spec.broken_fraction)
        on_topic = np.sort(body[:n_on])
        hubs = np.sort(body[n_on : n_on + n_hubs])
        broken = body[n_on + n_hubs : n_on + n_hubs + n_broken]
        kind[on_topic], kind[hubs], kind[broken] = ON_TOPIC, HUB, BROKEN
        self.kind = kind
        self.subject = rng.integers(0, len(TOPIC_NAMES), n).astype(np.int8)

        host = rng.integers(0, h, n).astype(np.int16)
        host[:h] = np.arange(h)
        # on-topic pages gather on the first third of the hosts, as sites do
        favoured = rng.random(n_on) < 0.7
        host[on_topic[favoured]] = rng.integers(0, max(1, h // 3), favoured.sum())
        self.host = host

        relevance = rng.uniform(0.0, 0.08, n).astype(np.float32)
        relevance[on_topic] = rng.uniform(0.45, 0.95, n_on)
        relevance[hubs] = rng.uniform(*spec.hub_relevance, n_hubs)
        relevance[broken] = 0.0
        relevance[:h] = 0.05
        self.relevance = relevance
        self.cluster = np.full(n, -1, dtype=np.int32)
        self.cluster[on_topic] = rng.integers(0, n_hubs, n_on)
        self.hubs, self.on_topic = hubs, on_topic
        self._build_links(rng)

    def _build_links(self, rng: np.random.Generator) -> None:
        spec, kind, n = self.spec, self.kind, self.spec.pages
        by_subject = [
            np.flatnonzero((kind == OFF_TOPIC) & (self.subject == s))
            for s in range(len(TOPIC_NAMES))
        ]
        members = [np.flatnonzero(self.cluster == c) for c in range(len(self.hubs))]
        hub_of_cluster = self.hubs
        off_topic = np.flatnonzero(kind == OFF_TOPIC)
        everything = np.arange(n)

        def pick(pool: np.ndarray, k: int) -> np.ndarray:
            if len(pool) == 0 or k <= 0:
                return np.empty(0, dtype=np.int64)
            return pool[rng.integers(0, len(pool), k)]

        out: list[np.ndarray] = []
        for page in range(n):
            k = kind[page]
            if k == HOME:
                parts = [
                    pick(off_topic, 12),
                    pick(self.hubs, 3),
                    pick(self.on_topic, 1),
                    pick(everything, 4),
                ]
            elif k == ON_TOPIC:
                cluster = self.cluster[page]
                parts = [
                    pick(members[cluster], 5),
                    pick(self.on_topic, spec.cross_links),
                    pick(off_topic, 3),
                    np.array([hub_of_cluster[cluster], self.host[page]]),
                ]
            elif k == HUB:
                cluster = np.flatnonzero(hub_of_cluster == page)[0]
                parts = [members[cluster], pick(self.hubs, 2), pick(off_topic, 3)]
            elif k == BROKEN:
                parts = []
            else:
                parts = [pick(by_subject[self.subject[page]], 8), pick(everything, 1)]
                if rng.random() < 0.3:
                    parts.append(pick(self.hubs, 1))
                if rng.random() < 0.05:
                    parts.append(pick(self.on_topic, 1))
            links = np.unique(np.concatenate(parts)) if parts else np.empty(0, dtype=np.int64)
            out.append(links[links != page])
        lengths = np.fromiter((len(x) for x in out), dtype=np.int64, count=n)
        self.link_start = np.concatenate([[0], np.cumsum(lengths)])
        self.link_target = (np.concatenate(out) if out else np.empty(0)).astype(np.int32)

    # -- pages ----------------------------------------------------------------------

    def links_of(self, page: int) -> np.ndarray:
        return self.link_target[self.link_start[page] : self.link_start[page + 1]]

    def is_redirect_link(self, source: int, target: int) -> bool:
        return (source * 7919 + target * 104729 + self.spec.seed) % 1000 < (
            self.spec.redirect_fraction * 1000
        )

    def status_of(self, page: int) -> int:
        if self.kind[page] != BROKEN:
            return 200
        return 500 if page % 2 else 404

    def words(self, page: int, count: int, rng: random.Random) -> list[str]:
        relevance = float(self.relevance[page])
        own = NAVIGATION if self.kind[page] == HUB else OTHER_VOCAB[TOPIC_NAMES[self.subject[page]]]
        words = []
        for _ in range(count):
            draw = rng.random()
            if draw < relevance:
                words.append(rng.choice(TOPIC_WORDS))
            elif draw < relevance + (1 - relevance) * 0.6:
                words.append(rng.choice(own))
            else:
                words.append(rng.choice(FILLER))
        return words

    def anchor(self, source: int, target: int) -> str:
        rng = random.Random(source * 1_000_003 + target)
        k = self.kind[target]
        if k == HOME:
            return "home"
        if k == HUB:
            return " ".join(rng.sample(NAVIGATION, 2))
        if k == ON_TOPIC and rng.random() < 0.65:
            return " ".join([*self.words(target, 4, rng), rng.choice(TOPIC_WORDS)])
        if k == OFF_TOPIC and rng.random() < 0.7:
            return " ".join(rng.sample(OTHER_VOCAB[TOPIC_NAMES[self.subject[target]]], 3))
        return " ".join(rng.sample(GENERIC_ANCHORS, 2))

    def render(
        self,
        page: int,
        page_url: Callable[[int], str],
        redirect_url: Callable[[int, int], str],
        *,
        paragraphs: int = 3,
    ) -> str:
        """The HTML of `page`, its links written with the given URL makers; more
        `paragraphs` make pages that cost more to process."""
        rng = random.Random(self.spec.seed * 1_000_003 + page)
        title = " ".join(self.words(page, rng.randint(3, 6), rng)).title()
        texts = [" ".join(self.words(page, rng.randint(40, 80), rng)) for _ in range(paragraphs)]
        items = []
        for target in self.links_of(page).tolist():
            if self.is_redirect_link(page, target):
                href = redirect_url(page, target)
            else:
                href = page_url(target)
            items.append(f'<li><a href="{href}">{self.anchor(page, target)}</a></li>')
        if self.kind[page] == HOME:
            items.extend(
                f'<li><a href="/private/{i}">members area</a></li>'
                for i in range(self.spec.private_links)
            )
            items.append('<li><a href="/loop/a">archive</a></li>')  # a redirect loop
        body = "".join(f"<p>{text}</p>" for text in texts)
        return (
            '<!doctype html><html><head><meta charset="utf-8">'
            f"<title>{title}</title></head><body><h1>{title}</h1>{body}"
            f"<ul>{''.join(items)}</ul></body></html>"
        )
