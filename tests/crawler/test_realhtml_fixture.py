"""The real-HTML fixture itself (tests/realhtml.py, tests/data/realhtml/): the site serves
every page of its ground truth as nginx would, a whole crawl stores exactly those pages
by the same URLs, and the ground truth has the relevant pages it was made with."""

from __future__ import annotations

import tarfile
from collections import Counter, deque

import aiohttp
from yarl import URL

from tests.crawler.helpers import collection, crawl
from tests.realhtml import ARCHIVE, DATA, LICENCE, TOPICS, RealSite, real_site, site_files

# bench/realweb/make_fixture.py's output: relevant pages (cosine >= 0.1) by depth
RELEVANT_BY_DEPTH = {
    "extension-api": {1: 8, 2: 9},
    "docstrings": {1: 1, 2: 9, 3: 2},
}


def depths(site: RealSite) -> dict[str, int]:
    depth = dict.fromkeys(site.seeds, 0)
    queue = deque(site.seeds)
    while queue:
        url = queue.popleft()
        for target in site.links[url]:
            if target not in depth:
                depth[target] = depth[url] + 1
                queue.append(target)
    return depth


def file_of(site: RealSite, url: str) -> str:
    """The archive's file a page is served from."""
    path = url.removeprefix(site.base)
    return path + "index.html" if path == "" or path.endswith("/") else path


def test_the_archive_holds_the_html_pages_alone_beside_its_licence() -> None:
    assert LICENCE.is_file()
    licence = LICENCE.read_text()
    assert "Upstream-Name: Sphinx" in licence
    assert "License: BSD-2-clause" in licence
    readme = (DATA / "README.md").read_text()
    assert ARCHIVE.name in readme
    assert LICENCE.name in readme
    assert ARCHIVE.stat().st_size < 1_000_000
    with tarfile.open(ARCHIVE) as archive:
        members = archive.getmembers()
    assert all(member.isfile() and member.name.endswith(".html") for member in members)
    assert len(site_files()) == len(members) == 133


async def test_the_site_serves_every_page_of_the_ground_truth_as_nginx_would() -> None:
    async with real_site("extension-api") as site, aiohttp.ClientSession() as session:
        assert len(site.truth) == 134
        assert site.seeds == [site.base]
        assert all(site.links.values())  # every page links to another
        assert {file_of(site, url) for url in site.truth} == set(site_files())
        for url in site.truth:
            async with session.get(url, allow_redirects=False) as answer:
                assert answer.status == 200, url
                assert answer.content_type == "text/html"
                assert await answer.read() == site_files()[file_of(site, url)]
        assert all(site.requests[URL(url).path] == 1 for url in site.truth)
        for path, status, location in [
            ("/usage", 301, "/usage/"),  # a directory without its slash
            ("/usage/", 200, None),
            ("/%75sage/index.html?q=1", 200, None),  # decoded; the query is ignored
            ("/usage/missing.html", 404, None),
            ("/_static/jquery.js", 404, None),  # only the HTML is shipped
        ]:
            async with session.get(site.url(path), allow_redirects=False) as answer:
                assert answer.status == status, path
                assert answer.headers.get("Location") == location
        assert site.hostnames == ["127.0.0.1"]


async def test_a_whole_crawl_stores_exactly_the_ground_truths_pages(db_url: str) -> None:
    async with real_site("docstrings") as site:
        summary = await crawl(
            db_url,
            site.seeds,
            topic=site.topic,
            allowed_domains=tuple(site.hostnames),
            max_pages=1000,
        )
        requests = Counter(site.requests)
    stored = await collection(db_url)
    assert summary.stop_reason == "frontier exhausted"
    assert {url for url, page in stored.items() if page.status == 200} == set(site.truth)
    assert all(page.final_url in (None, url) for url, page in stored.items())
    # the rest are links to what the archive leaves out (images, downloads) or what lies
    # outside the package's HTML root (/usr/share/...), which nginx answers 404 as well
    assert {page.status for url, page in stored.items() if url not in site.truth} == {404}
    # counted at the server: every page requested once, and nothing twice
    assert all(requests[URL(url).path] == 1 for url in site.truth)
    assert max(requests.values()) == 1


async def test_the_ground_truth_has_its_relevant_pages_at_several_depths() -> None:
    for name in TOPICS:
        async with real_site(name) as site:
            depth = depths(site)
            assert set(depth) == set(site.truth)  # every page is reachable from the seed
            by_depth = Counter(depth[url] for url in site.relevant)
            assert dict(by_depth) == RELEVANT_BY_DEPTH[name], name
            assert site.threshold == 0.1
            assert all(0 <= relevance <= 1 for relevance in site.truth.values())
    assert site.topic == "google numpy docstrings"
