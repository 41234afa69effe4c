from __future__ import annotations

import io

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from sklearn.preprocessing import normalize

from policies import NotFittedError, TopicScorer, link_text, url_words

SOLAR = "Solar panels turn sunlight into energy; a rooftop photovoltaic array and inverter."
COOKING = "Whisk the flour and butter, then bake the dough in a hot oven for dinner."


def test_on_topic_text_scores_higher_than_off_topic_text() -> None:
    scorer = TopicScorer().fit(["solar energy"])
    on, off, empty = scorer.score([SOLAR, COOKING, ""])
    assert 0.0 < on <= 1.0
    assert off == 0.0
    assert empty == 0.0


def test_identical_text_scores_one() -> None:
    scorer = TopicScorer().fit([SOLAR])
    assert scorer.score([SOLAR])[0] == pytest.approx(1.0)


def test_learned_document_frequency_lowers_the_weight_of_common_words() -> None:
    scorer = TopicScorer().fit(["solar power"])
    page = ["solar power plant"]
    before = scorer.score(page)[0]
    # "power" turns out to be everywhere, "solar" rare: a solar page gains relevance
    scorer.partial_fit_counts(scorer.counter_.count(["power station"] * 50))
    assert scorer.score(["solar"])[0] > scorer.score(["power"])[0]
    assert scorer.score(page)[0] != pytest.approx(before)


def test_using_the_scorer_before_fit_is_a_clear_error() -> None:
    with pytest.raises(NotFittedError, match="call fit"):
        TopicScorer().score(["anything"])


@pytest.mark.parametrize("topic", [[], [""], ["   "], ["the and of"]])
def test_an_empty_topic_is_refused(topic: list[str]) -> None:
    with pytest.raises(ValueError, match="topic"):
        TopicScorer().fit(topic)


def test_link_estimate_blends_anchor_words_and_parent_relevance() -> None:
    scorer = TopicScorer(link_text_weight=0.7).fit(["solar energy"])
    counts = scorer.counter_.count(["solar energy guide", "read more"])
    on, off = scorer.estimate_links(counts, parent_relevance=0.5)
    assert off == pytest.approx(0.3 * 0.5)
    assert on > off
    assert on == pytest.approx(0.7 * scorer.score(["solar energy guide"])[0] + 0.15)


def test_a_links_context_moves_its_estimate_as_shark_search_blends_it() -> None:
    # an index row: the anchor names a function, the cell beside it the topic
    scorer = TopicScorer(link_text_weight=1.0).fit(["solar energy"])
    row = "panel_fit(x) Fit solar energy yields"
    links = scorer.counter_.count(["panel_fit", "solar guide"])
    contexts = scorer.counter_.count([row, "solar guide"])
    without = scorer.estimate_links(links, 0.0)
    described, guide = scorer.estimate_links(links, 0.0, contexts)
    assert without[0] == 0.0
    assert described == pytest.approx(0.2 * scorer.score([row])[0])
    assert described > 0.0
    # a link whose context is its anchor alone keeps its estimate
    assert guide == pytest.approx(without[1])
    with pytest.raises(ValueError, match="1 link contexts for 2 links"):
        scorer.estimate_links(links, 0.0, scorer.counter_.count(["one"]))


def test_state_round_trip_restores_the_same_scores() -> None:
    scorer = TopicScorer().fit(["solar energy"])
    scorer.partial_fit_counts(scorer.counter_.count([COOKING, SOLAR, "energy bills"]))
    restored = TopicScorer().fit(["solar energy"]).set_state(scorer.get_state())
    texts = [SOLAR, COOKING, "energy"]
    np.testing.assert_allclose(restored.score(texts), scorer.score(texts))
    assert restored.n_documents_ == scorer.n_documents_


def test_weights_refreshed_in_the_scorers_own_arrays_score_as_new_ones() -> None:
    """The weights, the topic and the widened topic are rewritten into arrays the scorer
    keeps: after many refreshes, with feedback from pages whose terms come and go, its
    scores and link estimates are exactly those of a scorer that made them anew."""
    words = ["solar", "energy", "panel", "inverter", "roof", "grid", "battery", "flour"]
    pages = [" ".join([*words[i % 8 : i % 8 + 3], f"w{i}"]) for i in range(300)]
    used = TopicScorer().fit(["solar energy"])
    for page in pages:
        counts = used.counter_.count([page])
        used.partial_fit_counts(counts)
        if used.score_counts(counts)[0] >= 0.1:
            used.add_feedback(counts)
        used.estimate_links(counts, 0.5)  # refreshes the widened topic as a crawl does
    assert used.n_feedback_ > 20
    used.add_feedback(used.counter_.count(["grid battery storage"]))  # terms not seen
    used.set_state(used.get_state())  # everything refreshed at its next use, in place
    new = TopicScorer().fit(["solar energy"]).set_state(used.get_state())
    texts = used.counter_.count([*pages[:30], "grid battery storage", "solar"])
    assert used.score_counts(texts).tolist() == new.score_counts(texts).tolist()
    assert used.estimate_links(texts, 0.2).tolist() == new.estimate_links(texts, 0.2).tolist()
    assert used.idf().tolist() == new.idf().tolist()


def test_a_state_saved_by_numpys_savez_compressed_is_read_the_same() -> None:
    """The state is an .npz archive whichever deflate level wrote it: one saved with
    `np.savez_compressed` (numpy's default level) restores the same scores."""
    scorer = TopicScorer().fit(["solar energy"])
    pages = scorer.counter_.count([COOKING, SOLAR, "energy bills"])
    scorer.partial_fit_counts(pages).add_feedback(pages)
    state = scorer.get_state()
    with np.load(io.BytesIO(state)) as saved:
        arrays = {name: saved[name] for name in saved.files}
    assert set(arrays) >= {"index", "value", "feedback_index", "feedback_value"}
    numpys = io.BytesIO()
    np.savez_compressed(numpys, **arrays)
    assert numpys.getvalue() != state
    texts = [SOLAR, COOKING, "energy"]
    for blob in (state, numpys.getvalue()):
        restored = TopicScorer().fit(["solar energy"]).set_state(blob)
        np.testing.assert_allclose(restored.score(texts), scorer.score(texts))
        links = restored.counter_.count(texts)
        np.testing.assert_allclose(
            restored.estimate_links(links, 0.0), scorer.estimate_links(links, 0.0)
        )


def test_state_from_another_feature_size_is_refused() -> None:
    state = TopicScorer(n_features=2**10).fit(["solar"]).get_state()
    with pytest.raises(ValueError, match="n_features"):
        TopicScorer().fit(["solar"]).set_state(state)


def test_url_words_takes_path_and_query_words_not_the_host() -> None:
    assert url_words("https://example.com/solar-panels/guide_2.html?q=inverter") == (
        "solar panels guide html inverter"
    )
    assert url_words("http://solar.example/") == ""


def test_a_links_text_holds_the_words_of_the_identifiers_in_its_anchor_and_url() -> None:
    assert link_text("SimpleDateFormat", "http://docs.example/java/text/SimpleDateFormat.html") == (
        "SimpleDateFormat java text SimpleDateFormat html Simple Date Format Simple Date Format"
    )
    assert link_text("pandas.read_csv", "http://docs.example/api/") == (
        "pandas.read_csv api pandas read csv"
    )
    assert link_text("HTTPServer", "http://docs.example/") == "HTTPServer  HTTP Server"
    # plain words, single words and capitals are left as they are
    assert link_text("HTTP API", "http://docs.example/") == "HTTP API "
    assert link_text("Getting started", "http://docs.example/tutorial/index.html") == (
        "Getting started tutorial index html"
    )
    assert link_text("Calendar", "http://docs.example/") == "Calendar "


def test_a_link_named_by_an_identifier_is_estimated_by_its_words() -> None:
    scorer = TopicScorer().fit(["date time zone calendar"])
    by_name = scorer.counter_.count(
        ["DateTimeZone", link_text("DateTimeZone", "http://d.example/")]
    )
    plain, split = scorer.estimate_links(by_name, parent_relevance=0.0)
    assert plain == 0.0  # one token the topic does not hold
    assert split > 0.3


def test_counting_no_texts_gives_an_empty_matrix() -> None:
    scorer = TopicScorer(n_features=2**10).fit(["solar"])
    counts = scorer.counter_.count([])
    assert counts.shape == (0, 2**10)
    assert scorer.estimate_links(counts, parent_relevance=0.5).shape == (0,)


def test_feedback_from_relevant_pages_widens_link_scores_not_page_relevance() -> None:
    scorer = TopicScorer(link_text_weight=1.0).fit(["solar energy"])
    anchor = scorer.counter_.count(["rooftop inverter"])
    before_link = scorer.estimate_links(anchor, 0.0)[0]
    before_page = scorer.score(["rooftop inverter"])[0]
    relevant = scorer.counter_.count(
        [f"solar energy rooftop inverter panel {i}" for i in range(40)]
    )
    scorer.partial_fit_counts(relevant)
    scorer.add_feedback(relevant)
    assert before_link == 0.0
    assert scorer.estimate_links(anchor, 0.0)[0] > 0.2
    assert scorer.score(["rooftop inverter"])[0] == before_page == 0.0
    off_topic = scorer.counter_.count(["flour butter oven"])
    assert scorer.estimate_links(off_topic, 0.0)[0] == 0.0


def test_feedback_is_part_of_the_saved_state() -> None:
    scorer = TopicScorer(link_text_weight=1.0).fit(["solar energy"])
    scorer.add_feedback(scorer.counter_.count(["solar energy rooftop inverter"] * 30))
    restored = TopicScorer(link_text_weight=1.0).fit(["solar energy"])
    restored.set_state(scorer.get_state())
    anchor = scorer.counter_.count(["rooftop inverter"])
    assert restored.estimate_links(anchor, 0.0)[0] == pytest.approx(
        scorer.estimate_links(anchor, 0.0)[0]
    )
    assert restored.n_feedback_ == 30


def test_merged_daemons_score_as_one_scorer_of_all_their_pages_and_save_only_their_own() -> None:
    pages = [SOLAR, COOKING, "energy bills", "solar flares", "bake bread", "energy"]
    first, second, whole = (TopicScorer().fit(["solar energy"]) for _ in range(3))
    first.partial_fit_counts(first.counter_.count(pages[:2]))
    second.partial_fit_counts(second.counter_.count(pages[2:4]))
    whole.partial_fit_counts(whole.counter_.count(pages[:4]))
    own = first.get_state()
    first.merge([second.get_state()])
    first.merge([second.get_state()])  # a later merge replaces the earlier: no double count
    assert first.get_state() == own
    # as one scorer of every page (the topic text counts once per daemon)
    assert first.n_documents_ == whole.n_documents_ + 1
    texts = [SOLAR, COOKING, "energy", "flares"]
    expected = whole.partial_fit_counts(whole.counter_.count(["solar energy"])).score(texts)
    np.testing.assert_allclose(first.score(texts), expected)
    # learning goes on between merges; the next merge takes the other's new pages
    first.partial_fit_counts(first.counter_.count(pages[4:5]))
    second.partial_fit_counts(second.counter_.count(pages[5:]))
    first.merge([second.get_state()])
    assert first.n_documents_ == 1 + 3 + 1 + 3
    restored = TopicScorer().fit(["solar energy"]).set_state(first.get_state())
    assert restored.n_documents_ == 1 + 3  # its topic and its own three pages


def reference_weights(scorer: TopicScorer, texts: list[str]) -> sp.csr_matrix:
    """The scorer's weighting with SciPy and scikit-learn: sublinear term frequency
    times IDF, each row normalised by sklearn."""
    counts = scorer.counter_.count(texts).tocsr().astype(np.float64)
    counts.data = np.log1p(counts.data)
    return normalize(counts @ sp.diags(scorer.idf()))


TEXTS = [SOLAR, COOKING, "", "the", "energy", "solar solar roof"]


@given(st.lists(st.sampled_from(TEXTS), min_size=1))
def test_scores_and_link_estimates_are_the_cosines_scikit_learn_computes(texts: list[str]) -> None:
    """Rows of any lengths, empty ones among them, scored in one call as each alone."""
    scorer = TopicScorer(link_text_weight=1.0, feedback_weight=0.7).fit(["solar energy"])
    pages = scorer.counter_.count([SOLAR, COOKING, "solar bills", "energy"])
    scorer.partial_fit_counts(pages).add_feedback(pages)
    documents, frequency = scorer.n_documents_, scorer.document_frequency_
    np.testing.assert_allclose(scorer.idf(), np.log((1 + documents) / (1 + frequency)) + 1)
    topic = reference_weights(scorer, ["solar energy"]).toarray().ravel()
    scores = scorer.score(texts)
    np.testing.assert_allclose(scores, [scorer.score([text])[0] for text in texts])
    expected = np.asarray(reference_weights(scorer, texts) @ topic).ravel()
    np.testing.assert_allclose(scores, np.clip(expected, 0, 1), atol=1e-12)
    # links: the topic widened by the relevant pages' centroid (unit rows, summed), weighed
    feedback = normalize(np.log1p(pages.tocsr().astype(np.float64))).sum(axis=0).A1
    centroid = feedback * scorer.idf()
    widened = topic + 0.7 * centroid / np.linalg.norm(centroid)
    widened /= np.linalg.norm(widened)
    links = scorer.estimate_links(scorer.counter_.count(texts), parent_relevance=0.0)
    expected = np.asarray(reference_weights(scorer, texts) @ widened).ravel()
    np.testing.assert_allclose(links, np.clip(expected, 0, 1), atol=1e-12)
