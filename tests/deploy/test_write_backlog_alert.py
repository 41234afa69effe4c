"""The write-backlog alert can fire: it reads the time dispatching is held for the writer,
and a real Prometheus raises it over a real crawl whose writer falls behind."""

from __future__ import annotations

import asyncio
import re
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry
from sqlalchemy import Connection

import storage
from crawler.config import CrawlConfig
from crawler.engine import writer_hold
from crawler.service import run_crawl
from crawler.telemetry.metrics import CrawlerMetrics
from storage import writes
from testbed.demo import free_port
from testbed.server import Testbed
from testbed.web import WebSpec
from tests.crawler.helpers import GaugeWatch
from tests.deploy.test_prometheus import SCRAPE_SECONDS, firing, process, shortened_rules
from tests.deploy.tools import DEPLOY, require

SECONDS_PER_RECORD = 0.02  # a writer of 50 results a second, far slower than the crawl
CONCURRENCY, BUFFER = 16, 16


def backlog_rule() -> str:
    rules = (DEPLOY / "prometheus" / "alerts.yml").read_text()
    found = re.search(r"- alert: CrawlerWriteBacklog\n(?:\s*#.*\n)*\s*expr: (.+)", rules)
    assert found is not None
    return found.group(1)


def test_the_backlog_alert_reads_the_counter_the_dispatcher_keeps() -> None:
    registry = CollectorRegistry()
    CrawlerMetrics(registry, version="test")
    names = {sample.name for metric in registry.collect() for sample in metric.samples}
    counter = re.search(r"rate\((\w+)\[", backlog_rule())
    assert counter is not None
    assert counter.group(1) in names


@pytest.mark.slow
async def test_a_real_backlog_fires_the_alert(
    tmp_path: Path, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    prometheus = require("prometheus")
    record_fetches = writes.record_fetches
    writer_slow = True

    def slow_record_fetches(
        connection: Connection, records: Sequence[storage.FetchRecord]
    ) -> None:  # on the writer's thread, which it holds up
        if writer_slow:
            time.sleep(SECONDS_PER_RECORD * len(records))
        record_fetches(connection, records)

    monkeypatch.setattr(writes, "record_fetches", slow_record_fetches)
    (tmp_path / "alerts.yml").write_text(
        shortened_rules((DEPLOY / "prometheus" / "alerts.yml").read_text())
    )
    metrics_port, web_port = free_port(), free_port()
    (tmp_path / "prometheus.yml").write_text(
        "global:\n"
        f"  scrape_interval: {SCRAPE_SECONDS}s\n"
        f"  evaluation_interval: {SCRAPE_SECONDS}s\n"
        "rule_files:\n  - alerts.yml\n"
        "scrape_configs:\n"
        "  - job_name: crawler\n"
        "    static_configs:\n"
        f'      - targets: ["127.0.0.1:{metrics_port}"]\n'
    )
    server_argv = [prometheus, f"--config.file={tmp_path / 'prometheus.yml'}"]
    server_argv += [f"--storage.tsdb.path={tmp_path / 'tsdb'}"]
    server_argv += [f"--web.listen-address=127.0.0.1:{web_port}"]
    base = f"http://127.0.0.1:{web_port}"
    registry = CollectorRegistry()
    async with Testbed(WebSpec(pages=8000, hosts=6, seed=1)) as bed:
        config = CrawlConfig(
            seeds=tuple(bed.seeds),
            topic=bed.topic,
            db=db_url,
            delay=0.0,
            allow_private_networks=True,
            allowed_domains=tuple(bed.hostnames),
            concurrency=CONCURRENCY,
            per_host_concurrency=CONCURRENCY,
            buffer=BUFFER,
            max_pages=3_000,
            metrics_port=metrics_port,
        )
        with process(server_argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL):
            async with GaugeWatch("crawler_write_queue_length", registry, every=0.01) as waiting:
                crawling = asyncio.create_task(
                    run_crawl(config, registry=registry, handle_signals=False)
                )
                try:
                    async with asyncio.timeout(180):
                        while not await asyncio.to_thread(backlog_alert_firing, base):
                            assert not crawling.done(), "the crawl ended before the alert"
                            await asyncio.sleep(0.5)
                    # the most the backlog reached before then: once the last page is
                    # fetched it drains while Prometheus scrapes and evaluates
                    most_before_firing = waiting.most
                finally:
                    writer_slow = False  # the rest is written at full speed
                summary = await crawling
    assert summary.fetched == config.max_pages
    # the backlog reached the hold and stayed bounded by it while the writer was slow
    hold = writer_hold.write_hold(CONCURRENCY)
    assert hold <= most_before_firing <= hold + CONCURRENCY + BUFFER + 1


def backlog_alert_firing(base: str) -> bool:
    try:
        return firing(base, "CrawlerWriteBacklog")
    except OSError:  # Prometheus not listening yet
        return False
