"""Hosts valued with optimism in live crawls of two real servers on loopback: the
Q-learning frontier tries a host whose links stand behind another host's, best-first
leaves it for last; before its budget affords the optimism, it asks for what best-first
asks."""

from __future__ import annotations

from pathlib import Path

from policies.frontier.qlearning.exploration_budget import ExplorationBudget
from tests.crawler.helpers import SEEN, crawl, html, links, serving, site

WARMUP = ExplorationBudget().warmup  # pages in best-first's order before any exploring
BUDGET = WARMUP + 40
BUSY_PAGES = 2 * BUDGET  # off-topic pages linked from the busy host's front page
TOPIC_PAGES = 10  # on-topic pages behind the quiet host's contents page


def busy_site():
    routes = {"/": html(links(*(f"/p{i}" for i in range(BUSY_PAGES)), words="recipes"))}
    for i in range(BUSY_PAGES):
        routes[f"/p{i}"] = html(links(f"/p{(i + 1) % BUSY_PAGES}", words="pasta recipes"))
    return site(routes)


def quiet_site():
    # its links name nothing of the topic either: they score as the busy host's do, and
    # come after them in best-first's order (ties go to the URL found first)
    routes = {
        "/": html(links("/contents", words="welcome")),
        "/contents": html(links(*(f"/t{i}" for i in range(TOPIC_PAGES)), words="chapters")),
    }
    for i in range(TOPIC_PAGES):
        routes[f"/t{i}"] = html(links(words="solar energy panels on roofs"))
    return site(routes)


async def requests_made(tmp_path: Path, policy: str) -> list[tuple[str, str]]:
    """(host, path) of each request of a crawl within the budget, in the order the
    servers received them, robots.txt left out."""
    busy, quiet = busy_site(), quiet_site()
    async with serving(busy, "127.0.0.1") as busy_url, serving(quiet, "127.0.0.2") as quiet_url:
        await crawl(
            f"sqlite+aiosqlite:///{tmp_path / f'{policy}.db'}",
            [busy_url, quiet_url],
            policy=policy,
            max_pages=BUDGET,
            concurrency=1,  # the order is the policy's, not the fetches' timing
            per_host_concurrency=1,
        )
    received = sorted(
        (arrived, host, path)
        for host, app in (("busy", busy), ("quiet", quiet))
        for path, arrived, _ in app[SEEN].requests
        if path != "/robots.txt"
    )
    return [(host, path) for _, host, path in received]


async def topic_pages_fetched(tmp_path: Path, policy: str) -> tuple[list[str], int]:
    """(requests of on-topic pages, of the busy host's pages) within the budget."""
    requests = await requests_made(tmp_path, policy)
    topic = [path for host, path in requests if host == "quiet" and path.startswith("/t")]
    busy_pages = sum(1 for host, path in requests if host == "busy" and path.startswith("/p"))
    return topic, busy_pages


async def test_best_first_leaves_a_host_queued_behind_another_for_last(tmp_path: Path) -> None:
    topic, busy_pages = await topic_pages_fetched(tmp_path, "best-first")
    assert topic == []
    assert busy_pages >= BUDGET - 3  # all but the two front pages and perhaps the contents


async def test_qlearning_tries_the_quiet_host_and_stays_where_pages_are_relevant(
    tmp_path: Path,
) -> None:
    topic, busy_pages = await topic_pages_fetched(tmp_path, "qlearning")
    assert sorted(topic) == sorted(f"/t{i}" for i in range(TOPIC_PAGES))  # each once
    assert busy_pages < BUDGET - TOPIC_PAGES - 2


async def test_qlearning_asks_for_what_best_first_asks_until_its_budget_affords_exploring(
    tmp_path: Path,
) -> None:
    """`ExplorationBudget`: the optimism is off until `WARMUP` pages taken in
    best-first's order are fetched and learned from; then the quiet host's contents page
    is tried, a few requests later (a page is learned from once its transaction commits,
    after the next ones were chosen)."""
    greedy = await requests_made(tmp_path, "best-first")
    learned = await requests_made(tmp_path, "qlearning")
    assert learned[:WARMUP] == greedy[:WARMUP]
    # the quiet host's front page; the busy host's, and its links
    assert [host for host, _ in greedy[:WARMUP]].count("busy") == WARMUP - 1
    assert ("quiet", "/contents") not in greedy
    assert ("quiet", "/contents") in learned[WARMUP : WARMUP + 15], learned
