"""The response processor: links known already cost nothing and change nothing."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest
from yarl import URL

from crawler.fetch.fetcher import Response
from crawler.fetch.visit import Visit
from crawler.net.scope import Scope
from crawler.net.urls import host_key
from crawler.outcomes import Outcome
from crawler.process import processor as processor_module
from crawler.process.parse import analyze
from crawler.process.processor import Processor
from crawler.store.records import PageWrite
from policies import Candidate, TopicScorer, make_frontier_policy
from policies.frontier import LinkContext
from policies.terms import TermHasher

WORDS = ["solar", "energy", "panel", "roof", "inverter", "grid", "flour", "oven", "garden"]


class NothingKnown:
    """A memory of known URLs that forgets everything: the processor as it was."""

    def add(self, url: str) -> None:
        pass

    def __contains__(self, url: object) -> bool:
        return False


def visit(url: str, depth: int, html: str) -> Visit:
    body = html.encode()
    response = Response(
        url=URL(url),
        status=200,
        content_type="text/html",
        charset=None,
        location=None,
        retry_after=None,
        x_robots_tag=None,
        body=body,
        truncated=False,
        size=len(body),
    )
    candidate = Candidate(hash(url) % 10**9, url, host_key(URL(url)), depth, 0.0)
    return Visit(candidate, Outcome.OK, url, response, datetime.now(UTC))


def processor(max_depth: int | None = None, *, link_contexts: bool = True) -> Processor:
    return Processor(
        scorer=TopicScorer().fit(["solar energy"]),
        scope=Scope.of(["site.example"], max_depth=max_depth),
        store_text=False,
        relevance_threshold=0.1,
        link_contexts=link_contexts,
    )


def test_a_new_links_words_are_handed_on_only_for_a_policy_that_reads_them() -> None:
    page = visit(
        "http://site.example/",
        0,
        "<title>Panels</title><ul><li><a href='/a'>solar</a> yield of a panel</li></ul>",
    )
    kept = processor().process(page).write
    assert kept.contexts == {
        "http://site.example/a": LinkContext("solar", "solar yield of a panel", "Panels")
    }
    left = processor(link_contexts=False).process(page).write
    assert [link.url for link in left.links] == ["http://site.example/a"]
    assert left.contexts == {}
    assert [link.score for link in left.links] == [link.score for link in kept.links]
    assert make_frontier_policy("qlearning").reads_link_context
    assert not make_frontier_policy("best-first").reads_link_context
    assert not make_frontier_policy("bfs").reads_link_context


def test_links_known_already_are_left_out_of_the_analysis_and_counted() -> None:
    page = analyze(
        b'<a href="/a">a</a><a href="/b">b</a><a href="/a#x">again</a><a href="/c">c</a>',
        url="http://site.example/",
        charset=None,
        x_robots_tag=None,
        counter=TermHasher(n_features=2**10),
        known={"http://site.example/a", "http://site.example/c"},
    )
    assert [link.url for link in page.links] == ["http://site.example/b"]
    assert page.known == 2
    assert page.counts.rows == 3  # the page, its one link, the link's context


def test_a_link_written_once_is_not_written_again_but_still_counts_in_scope() -> None:
    links = '<a href="/a">a</a><a href="/b">b</a><a href="http://elsewhere.example/">x</a>'
    shallow = processor(max_depth=2)
    first = shallow.process(visit("http://site.example/", 0, links)).write
    again = shallow.process(visit("http://site.example/other", 1, links)).write
    assert [link.url for link in first.links] == ["http://site.example/a", "http://site.example/b"]
    assert (first.links_in_scope, again.links, again.links_in_scope) == (2, [], 2)
    # one level deeper its links are out of scope, known or not
    deep = shallow.process(visit("http://site.example/deep", 2, links)).write
    assert (deep.links, deep.links_in_scope) == ([], 0)


def test_leaving_known_links_out_changes_no_page_score_or_link_estimate() -> None:
    """Page after page of a small site: what the processor writes with its memory of
    known URLs is what the database would have kept of what it writes without."""
    rng = random.Random(3)
    pages, linked = [], [0]
    for number in range(120):
        # a few pages link only to pages linked before: the expanded topic the link
        # estimates use must be refreshed when they are processed too
        targets = rng.sample(linked if number % 7 == 0 else range(number + 3), 4 if number else 1)
        linked.extend(targets)
        anchors = "".join(
            f'<p><a href="/p{target}">{" ".join(rng.choices(WORDS, k=2))}</a></p>'
            for target in targets
        )
        text = " ".join(rng.choices(WORDS, k=30))
        pages.append(visit(f"http://site.example/p{number}", number // 10, f"{text}{anchors}"))
    remembering, forgetting = processor(max_depth=8), processor(max_depth=8)
    forgetting.known = NothingKnown()  # type: ignore[assignment]
    in_database: set[str] = set()
    for page in pages:
        mine, plain = remembering.process(page), forgetting.process(page)
        assert mine.relevance == plain.relevance
        new = [link for link in plain.write.links if link.url not in in_database]
        in_database.update(link.url for link in plain.write.links)
        assert mine.write.links == new
        assert mine.write.links_in_scope == len(plain.write.links)
        assert contexts(mine.write) == contexts(plain.write, only=mine.write)


def contexts(write: PageWrite, *, only: PageWrite | None = None) -> dict[str, object]:
    urls = {link.url for link in (only or write).links}
    return {url: context for url, context in write.contexts.items() if url in urls}


def test_a_links_description_beside_it_raises_its_estimate_on_either_path() -> None:
    """An index row: the anchor names the page, the cell beside it the topic. Its
    estimate is the same whether the page is analysed here or by a worker that did not
    know the links before it (left out after, with their contexts)."""
    rows = "".join(
        f"<tr><td><a href='/{name}'>{name}</a></td><td>{description}</td></tr>"
        for name, description in [
            ("known", "cooking bread in an oven"),
            ("x1", "fit the solar energy yield of a panel"),
            ("x2", "bread and flour"),
        ]
    )
    page = visit("http://site.example/index", 0, f"<table>{rows}</table>")
    here, there = processor(), processor()
    for side in (here, there):
        side.known.add("http://site.example/known")
    written = here.process(page).write
    job = there.analysis_job(page)
    assert job is not None
    analysis = analyze(
        job.body, url=job.url, charset=None, x_robots_tag=None, counter=TermHasher()
    )  # a worker's: it knows no links
    from_worker = there.finish(page, analysis).write
    scores = {link.url.rsplit("/", 1)[1]: link.score for link in written.links}
    assert scores == {link.url.rsplit("/", 1)[1]: link.score for link in from_worker.links}
    assert set(scores) == {"x1", "x2"}
    # the anchors and URLs say nothing: the description alone sets them apart
    assert scores["x1"] > scores["x2"]


def test_links_of_a_page_whose_processing_failed_are_not_taken_as_known(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The engine records a page that raised as an internal error, without its links:
    they must stay new for the next page that links to them."""
    links = '<a href="/a">a</a>'
    shallow = processor()

    def broken(*args: object, **kwargs: object) -> PageWrite:
        raise RuntimeError("a bug after the links were estimated")

    monkeypatch.setattr(processor_module, "PageWrite", broken)
    with pytest.raises(RuntimeError):
        shallow.process(visit("http://site.example/", 0, links))
    monkeypatch.undo()
    again = shallow.process(visit("http://site.example/other", 1, links)).write
    assert [link.url for link in again.links] == ["http://site.example/a"]
