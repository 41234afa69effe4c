"""Re-visiting sources in live crawls of the testbed's ephemeral sources."""

from __future__ import annotations

import asyncio
import bisect
import json
import math
import re
import sys
from collections import Counter
from pathlib import Path

import pytest
from aiohttp import ClientSession
from prometheus_client import CollectorRegistry

from crawler.cli import main
from crawler.config import ConfigError, build_config
from crawler.frontier.revisits import learned_rates
from crawler.reporting.collection import format_status, status, top_sources
from testbed.server import Testbed
from testbed.sources import EphemeralSource
from testbed.web import WebSpec
from tests.crawler.helpers import collection, crawl
from tests.crawler.helpers import sources as load_sources

SMALL_WEB = WebSpec(pages=60, hosts=2, seed=5)
PERIOD = 0.3  # seconds between re-visit plans


async def crawl_sources(
    db_url: str,
    bed: Testbed,
    *,
    policy: str,
    duration: float,
    registry: CollectorRegistry | None = None,
    **settings: object,
) -> None:
    await crawl(
        db_url,
        bed.seeds,
        allowed_domains=tuple(bed.hostnames),
        registry=registry,
        revisit=policy,
        revisit_period=PERIOD,
        revisit_budget=1,
        interest_half_life=1.0,
        duration=duration,
        **settings,
    )


def source_requests(bed: Testbed, source: int) -> list[int]:
    """Statuses of the requests for a source's page, in order."""
    return [r.status for r in bed.requests if r.path == f"/s/{source}"]


async def test_sources_are_revisited_and_their_new_items_fetched(db_url: str) -> None:
    registry = CollectorRegistry()
    specs = [EphemeralSource(0.5, 0.7, 4.0), EphemeralSource(0.3, 0.7, 4.0)]
    async with Testbed(SMALL_WEB, sources=specs) as bed:
        await crawl_sources(db_url, bed, policy="round-robin", duration=4.0, registry=registry)
        item_paths = [r.path for r in bed.requests if "/item/" in r.path]
        ledger = list(bed.sources.ledger)
        published = [bed.sources.published(i, bed.now()) for i in range(2)]
    sources = await load_sources(db_url)
    for i in range(2):
        source = sources[bed.source_url(i)]
        assert source.visits >= 3
        assert 0 < source.items <= published[i]
        assert source.worth_items > 0  # its items were fetched and scored
    assert {entry.source for entry in ledger} == {0, 1}
    assert max(Counter(item_paths).values()) == 1  # each item fetched once
    revisits = sum(s.visits for s in sources.values())
    used = registry.get_sample_value("crawler_fetch_budget_used_total", {"use": "revisit"})
    assert used == revisits
    found = sum(
        registry.get_sample_value("crawler_revisits_total", {"result": r}) or 0
        for r in ("new_items", "unchanged", "not_modified")
    )
    assert found == revisits
    assert registry.get_sample_value("crawler_revisit_new_items_total") == sum(
        s.items for s in sources.values()
    )
    assert registry.get_sample_value("crawler_sources") == len(sources)
    report = await status(db_url)
    assert (report.sources, report.revisits) == (len(sources), revisits)
    assert report.revisit_items == sum(s.items for s in sources.values())
    shown = re.search(r"^sources +(\d+) \(re-visited (\d+) times", format_status(report), re.M)
    assert shown is not None
    assert (int(shown[1]), int(shown[2])) == (len(sources), revisits)
    # what each source has shown: its items' relevance orders them as their worth does
    measured = {s.url: s for s in await top_sources(db_url)}
    first, second = measured[bed.source_url(0)], measured[bed.source_url(1)]
    assert first.worth is not None
    assert second.worth is not None
    assert first.worth > second.worth
    assert first.change_rate is not None
    assert first.change_rate > 0


async def test_crawler_status_lists_the_sources(
    db_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    async with Testbed(SMALL_WEB, sources=[EphemeralSource(0.5, 0.7, 4.0)]) as bed:
        await crawl_sources(db_url, bed, policy="whittle", duration=2.0)
    record = (await load_sources(db_url))[bed.source_url(0)]
    assert await asyncio.to_thread(main, ["status", "--db", db_url]) == 0
    out = capsys.readouterr().out
    assert "sources publishing the most" in out
    assert bed.source_url(0) in out
    assert await asyncio.to_thread(main, ["status", "--db", db_url, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    top = report["top_sources"][0]
    assert top["url"] == bed.source_url(0)
    # the rate its re-visits have shown: the items they found over the time they covered
    assert record.visits >= 2
    assert top["arrival_rate"] == pytest.approx(record.items / record.exposure)
    assert abs(record.items - 4.0 * record.exposure) <= 4 * math.sqrt(4.0 * record.exposure)


async def test_an_unchanged_source_answers_304_and_keeps_its_record(db_url: str) -> None:
    registry = CollectorRegistry()
    quiet = EphemeralSource(0.5, 0.7, 0.001)  # publishes about once in twenty minutes
    async with Testbed(SMALL_WEB, sources=[quiet]) as bed:
        await crawl_sources(db_url, bed, policy="round-robin", duration=3.0, registry=registry)
        statuses = source_requests(bed, 0)
    assert statuses[0] == 200
    assert statuses.count(304) >= 3  # the ETag came back and matched
    not_modified = registry.get_sample_value("crawler_revisits_total", {"result": "not_modified"})
    assert not_modified == statuses.count(304)
    record = (await collection(db_url))[bed.source_url(0)]
    assert record.title == "Source 0"
    assert record.fetch_count == statuses.count(200)  # a 304 rewrites nothing


@pytest.mark.slow
async def test_learned_arrival_rates_approach_the_true_ones(db_url: str) -> None:
    specs = [EphemeralSource(0.5, 0.7, 60.0), EphemeralSource(0.5, 0.7, 15.0)]
    async with Testbed(SMALL_WEB, sources=specs) as bed:
        await crawl_sources(db_url, bed, policy="round-robin", duration=5.0)
        listings = {
            i: [r for r in bed.requests if r.path == f"/s/{i}" and r.status in (200, 304)]
            for i in range(len(specs))
        }
        arrivals = {i: bed.sources.arrival_times(i) for i in range(len(specs))}
    records = list((await load_sources(db_url)).values())
    rates = learned_rates(records, period=PERIOD)
    for i, spec in enumerate(specs):
        source = next(r for r in records if r.url == bed.source_url(i))
        assert source.visits >= 5
        # it counted the items the server published between its first listing and the
        # last one it learned from (a listing is made while its request is served)
        first, last = listings[i][0], listings[i][source.visits]

        def published(moment: float, i: int = i) -> int:
            return bisect.bisect_right(arrivals[i], moment - bed.started)

        least = published(last.started) - published(first.finished)
        most = published(last.finished) - published(first.started)
        assert least <= source.items <= most
        # the rate it plans with is within four Poisson deviations of the truth, beside
        # the pull of its prior (one period's worth of exposure at the sources' mean)
        deviation = 4 * math.sqrt(spec.arrival_rate * source.exposure) / source.exposure
        prior_pull = PERIOD / source.exposure * max(s.arrival_rate for s in specs)
        assert abs(rates[source.url] - spec.arrival_rate) <= deviation + prior_pull


async def test_a_resumed_crawl_keeps_what_it_learned_of_its_sources(db_url: str) -> None:
    specs = [EphemeralSource(0.5, 0.7, 4.0)]
    async with Testbed(SMALL_WEB, sources=specs) as bed:
        await crawl_sources(db_url, bed, policy="greedy", duration=2.0)
        first = (await load_sources(db_url))[bed.source_url(0)]
        await crawl_sources(db_url, bed, policy="greedy", duration=2.0)
        statuses = source_requests(bed, 0)
    second = (await load_sources(db_url))[bed.source_url(0)]
    assert first.visits >= 2
    assert second.visits > first.visits
    assert second.items > first.items
    assert second.exposure > first.exposure
    # the second run re-visited without fetching the source afresh first
    assert len(statuses) == 1 + second.visits


@pytest.mark.slow
async def test_whittle_re_visits_the_source_worth_more_more_often(db_url: str) -> None:
    rich, poor = EphemeralSource(0.6, 0.7, 8.0), EphemeralSource(0.03, 0.7, 8.0)
    visits = {}
    for policy in ("whittle", "round-robin"):
        url = db_url.replace("crawl.db", f"{policy}.db")
        async with Testbed(SMALL_WEB, sources=[rich, poor]) as bed:
            await crawl_sources(url, bed, policy=policy, duration=5.0)
        sources = await load_sources(url)
        visits[policy] = [sources[bed.source_url(i)].visits for i in range(2)]
    assert visits["whittle"][0] >= 2 * visits["whittle"][1]
    assert visits["whittle"][1] >= 1  # a source looks average until re-visited: it is tried
    assert abs(visits["round-robin"][0] - visits["round-robin"][1]) <= 2


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"revisit": "sometimes"}, "setting 'revisit' must be one of whittle, greedy"),
        ({"revisit_period": 0}, "setting 'revisit_period' must be greater than 0"),
        ({"interest_half_life": "inf"}, "setting 'interest_half_life' must be finite"),
        ({"source_min_links": 0}, "setting 'source_min_links' must be greater than 0"),
    ],
)
def test_bad_revisit_settings_are_named(values: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        build_config(flag_values=values, environ={})


def test_a_source_decays_at_the_half_life_of_its_longest_prefix() -> None:
    config = build_config(
        flag_values={
            "revisit": "whittle",
            "revisit_period": 5.0,
            "interest_half_life": 100.0,
            "source_half_lives": ["http://a.test/=10", "http://a.test/news/=2.5"],
        },
        environ={},
    )
    settings = config.revisits
    per_second = math.log(2.0) * 5.0
    assert settings.decay_per_period("http://a.test/news/1") == pytest.approx(per_second / 2.5)
    assert settings.decay_per_period("http://a.test/about") == pytest.approx(per_second / 10)
    assert settings.decay_per_period("http://b.test/") == pytest.approx(per_second / 100)


@pytest.mark.parametrize("entry", ["http://a.test/", "http://a.test/=0", "=5", "x=soon"])
def test_a_bad_source_half_life_is_named(entry: str) -> None:
    with pytest.raises(ConfigError, match="setting 'source_half_lives' entries are URL_PREFIX"):
        build_config(flag_values={"source_half_lives": [entry]}, environ={})


async def test_the_testbed_command_serves_sources_and_their_ledger(tmp_path: Path) -> None:
    table = tmp_path / "sources.csv"
    table.write_text("xi,mu,Lambda\n0.5,0.1,50\n0.2,0.1,50\n")
    testbed = await asyncio.create_subprocess_exec(
        sys.executable,
        *("-m", "crawler", "testbed", "--port", "0", "--pages", "40", "--hosts", "2"),
        *("--sources", str(table)),
        stdout=asyncio.subprocess.PIPE,
    )
    try:
        assert testbed.stdout is not None
        lines = [
            (await asyncio.wait_for(testbed.stdout.readline(), 30)).decode().strip()
            for _ in range(6)
        ]
        assert lines[3].startswith("source 0: http://127.0.0.1:")
        assert lines[4].startswith("source 1: http://127.0.0.2:")
        source, ledger = lines[3].split()[-1], lines[5].split()[-1]
        await asyncio.sleep(0.2)  # at 50 a second, some items are out
        async with ClientSession() as session:
            async with session.get(source) as response:
                listing = await response.text()
            item = listing.split('href="', 1)[1].split('"', 1)[0]
            async with session.get(source.rsplit("/s/", 1)[0] + item) as response:
                assert response.status == 200
            async with session.get(ledger) as response:
                report = await response.json()
    finally:
        testbed.terminate()
        await testbed.wait()
    assert report["items"] == 1
    assert report["by_source"][1] == 0.0
    assert 0 < report["collected"] == report["by_source"][0]
