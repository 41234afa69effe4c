"""The synthetic web: deterministic, with the structure the focus tests rely on."""

from __future__ import annotations

import asyncio
import csv
import sys
from pathlib import Path

import numpy as np
import pytest
from aiohttp import ClientSession

from testbed.server import Testbed
from testbed.web import BROKEN, HUB, OFF_TOPIC, ON_TOPIC, TestbedWeb, WebSpec
from tests.crawler.helpers import collection


def test_the_same_seed_gives_the_same_web_and_another_seed_another() -> None:
    first, again, other = (TestbedWeb(WebSpec(pages=500, seed=s)) for s in (1, 1, 2))
    np.testing.assert_array_equal(first.link_target, again.link_target)
    np.testing.assert_array_equal(first.relevance, again.relevance)
    assert not np.array_equal(first.link_target[:100], other.link_target[:100])
    assert first.render(7, str, lambda s, t: f"r{t}") == again.render(7, str, lambda s, t: f"r{t}")


def test_hubs_are_barely_relevant_but_lead_to_relevant_pages() -> None:
    web = TestbedWeb(WebSpec(pages=4000))
    hubs = np.flatnonzero(web.kind == HUB)
    on_topic = web.kind == ON_TOPIC
    off_topic = web.kind == OFF_TOPIC
    # a hub has little content: it looks no more relevant than an off-topic page
    assert web.relevance[hubs].max() <= 0.05 < web.relevance[off_topic].max()
    assert on_topic.mean() == pytest.approx(0.12, abs=0.01)
    for hub in hubs[:10]:
        assert on_topic[web.links_of(hub)].mean() > 0.7
    assert (web.relevance[on_topic] >= 0.45).all()
    # clusters meet only through hubs: members link to no other cluster's members
    for page in np.flatnonzero(on_topic)[:50]:
        targets = web.links_of(page)
        linked = targets[on_topic[targets]]
        assert (web.cluster[linked] == web.cluster[page]).all()


def test_the_spec_refuses_a_web_too_small_for_its_hosts() -> None:
    with pytest.raises(ValueError, match="at least 60 pages"):
        WebSpec(pages=50, hosts=6)


async def test_ground_truth_describes_what_is_served(tmp_path: Path) -> None:
    async with Testbed(WebSpec(pages=300, hosts=3)) as bed:
        bed.write_ground_truth(tmp_path)
        with (tmp_path / "pages.tsv").open() as handle:
            pages = list(csv.DictReader(handle, delimiter="\t"))
        with (tmp_path / "links.tsv").open() as handle:
            links = list(csv.DictReader(handle, delimiter="\t"))
        async with ClientSession() as session:
            on_topic = [p for p in pages if float(p["relevance"]) >= 0.45][:3]
            for page in on_topic:
                async with session.get(page["url"]) as response:
                    assert response.status == 200
                    assert "<title>" in await response.text()
            broken = next(p for i, p in enumerate(pages) if bed.web.kind[i] == BROKEN)
            async with session.get(broken["url"]) as response:
                assert response.status in (404, 500)
    assert len(pages) == 300
    assert all(0.0 <= float(p["relevance"]) <= 1.0 for p in pages)
    assert len(links) == len(bed.web.link_target)
    urls = {p["url"] for p in pages}
    assert all(link["src"] in urls and link["dst"] in urls for link in links)
    assert (tmp_path / "seeds.txt").read_text().split() == [
        f"{b}/p/{i}" for i, b in enumerate(bed.base_urls)
    ]
    assert (tmp_path / "topic.txt").read_text().strip() == "solar energy"


async def test_crawling_the_ground_truths_seeds_file_crawls_every_host(
    tmp_path: Path, db_url: str
) -> None:
    """`crawler run --seeds-file DIR/seeds.txt --allow-private-networks`, with no
    --allowed-domain, stays on the seeds' hosts: the seeds file names every host."""
    async with Testbed(WebSpec(pages=800, hosts=4, seed=3)) as bed:
        bed.write_ground_truth(tmp_path)
        argv = ["run", "--seeds-file", str(tmp_path / "seeds.txt")]
        argv += ["--topic-file", str(tmp_path / "topic.txt"), "--allow-private-networks"]
        argv += ["--db", db_url, "--max-pages", "200", "--delay", "0", "--metrics-port", "0"]
        crawler = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "crawler", *argv, stdout=asyncio.subprocess.DEVNULL
        )
        assert await asyncio.wait_for(crawler.wait(), timeout=120) == 0
    fetched = [record for record in (await collection(db_url)).values() if record.status]
    assert len(fetched) >= 190  # not a few pages of one host, then "frontier exhausted"
    assert {record.host.rsplit(":", 1)[0] for record in fetched} == set(bed.hostnames)


async def test_the_testbed_and_demo_commands_run(tmp_path: Path) -> None:
    testbed = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "crawler",
        "testbed",
        "--port",
        "0",
        "--pages",
        "200",
        "--hosts",
        "2",
        stdout=asyncio.subprocess.PIPE,
    )
    try:
        assert testbed.stdout is not None
        banner = (await asyncio.wait_for(testbed.stdout.readline(), 30)).decode()
        seed = (await asyncio.wait_for(testbed.stdout.readline(), 30)).decode().split()[-1]
        assert banner.startswith("testbed: 200 pages on http://127.0.0.1:")
        async with ClientSession() as session, session.get(seed) as response:
            assert response.status == 200
    finally:
        testbed.terminate()
        await testbed.wait()
    demo = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "crawler",
        "demo",
        "--duration",
        "3",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        cwd=tmp_path,  # where it keeps its database
    )
    out, _ = await asyncio.wait_for(demo.communicate(), 60)
    text = out.decode()
    assert demo.returncode == 0
    assert "metrics: http://127.0.0.1:" in text
    assert "harvest rate" in text
    assert "most relevant pages:" in text
