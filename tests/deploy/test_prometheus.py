"""A real Prometheus scrapes a real crawl: the series arrive, the dashboard's queries
answer, and the stalled-crawl alert fires when the sites stop answering.

The crawler runs as the image runs it (`crawler run --config FILE`), over the testbed in
its own process. The shipped alert rules are used with their windows shortened from
minutes to seconds, so the alert can fire within the test.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote
from urllib.request import urlopen

import pytest

from tests.deploy.test_healthcheck import image_healthcheck
from tests.deploy.tools import DEPLOY, require

SCRAPE_SECONDS = 1
TIMEOUT = 60.0  # seconds any one wait may take


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def get_json(url: str) -> Any:
    with urlopen(url, timeout=5) as response:
        return json.load(response)


def wait_for(what: str, check: Any, timeout: float = TIMEOUT) -> Any:
    """Poll `check` until it returns something true; fail naming `what` after timeout."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            result = check()
        except OSError:
            result = None
        if result:
            return result
        time.sleep(0.5)
    pytest.fail(f"timed out waiting for {what}")


def shortened_rules(text: str) -> str:
    """The shipped rules with minutes and hours of windows and waits made seconds."""
    text = re.sub(r"\[(\d+)[mh]\]", "[5s]", text)
    return re.sub(r"for: \d+[mh]", "for: 3s", text)


@contextmanager
def process(argv: list[str], **options: Any) -> Iterator[subprocess.Popen[str]]:
    child = subprocess.Popen(argv, text=True, **options)
    try:
        yield child
    finally:
        if child.poll() is None:
            child.terminate()
            try:
                child.wait(timeout=30)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
        if child.stdout is not None:
            child.stdout.close()


def query(base: str, expression: str) -> dict[str, Any]:
    answer: dict[str, Any] = get_json(f"{base}/api/v1/query?query={quote(expression)}")
    return answer


def firing(base: str, name: str) -> bool:
    alerts = get_json(f"{base}/api/v1/alerts")["data"]["alerts"]
    return any(a["labels"]["alertname"] == name and a["state"] == "firing" for a in alerts)


@pytest.mark.slow
def test_prometheus_scrapes_the_crawler_and_alerts_when_the_crawl_stalls(
    tmp_path: Path,
) -> None:
    prometheus = require("prometheus")
    promtool = require("promtool")
    rules = tmp_path / "alerts.yml"
    rules.write_text(shortened_rules((DEPLOY / "prometheus" / "alerts.yml").read_text()))
    checked = subprocess.run(
        [promtool, "check", "rules", str(rules)], capture_output=True, text=True, timeout=60
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr

    testbed_argv = [sys.executable, "-m", "crawler", "testbed", "--port", "0"]
    testbed_argv += ["--pages", "20000", "--hosts", "3"]
    with process(testbed_argv, stdout=subprocess.PIPE) as testbed:
        assert testbed.stdout is not None
        testbed.stdout.readline()
        seed = testbed.stdout.readline().split()[-1]
        metrics_port = free_port()
        (tmp_path / "crawl.toml").write_text(
            "[crawl]\n"
            f'seeds = ["{seed}"]\n'
            'topic = "solar energy"\n'
            f'db = "sqlite+aiosqlite:///{tmp_path / "crawl.db"}"\n'
            "delay = 0.2\n"
            'metrics_host = "127.0.0.1"\n'
            f"metrics_port = {metrics_port}\n"
            "allow_private_networks = true\n"
            "connect_timeout = 1.0\n"
            "total_timeout = 2.0\n"
        )
        web_port = free_port()
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
        # the image's command, with the console script the package installs
        crawler_argv = [str(Path(sys.executable).parent / "crawler"), "run"]
        crawler_argv += ["--config", str(tmp_path / "crawl.toml")]
        server_argv = [prometheus, f"--config.file={tmp_path / 'prometheus.yml'}"]
        server_argv += [f"--storage.tsdb.path={tmp_path / 'tsdb'}"]
        server_argv += [f"--web.listen-address=127.0.0.1:{web_port}"]
        base = f"http://127.0.0.1:{web_port}"
        with (
            process(crawler_argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL),
            process(server_argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL),
        ):
            wait_for("Prometheus to be ready", lambda: urlopen(f"{base}/-/ready", timeout=2))

            def fetched_ok() -> float:
                result = query(base, 'crawler_fetches_total{outcome="ok"}')["data"]["result"]
                return float(result[0]["value"][1]) if result else 0.0

            first = wait_for("the crawler's fetches in Prometheus", fetched_ok)
            wait_for("more fetches", lambda: fetched_ok() > first)
            target = get_json(f"{base}/api/v1/targets")["data"]["activeTargets"][0]
            assert target["health"] == "up"
            healthcheck = image_healthcheck(tmp_path / "crawl.toml")
            assert subprocess.run(healthcheck, timeout=30).returncode == 0
            outcomes = query(base, "crawler_fetches_total")["data"]["result"]
            assert {"ok", "http_error", "robots"} <= {s["metric"]["outcome"] for s in outcomes}
            frontier = query(base, "crawler_frontier_size")["data"]["result"]
            assert float(frontier[0]["value"][1]) > 0
            check_dashboard_queries(base)
            assert not firing(base, "CrawlerStalled")

            testbed.terminate()  # the sites stop answering
            testbed.wait(timeout=30)
            wait_for("CrawlerStalled to fire", lambda: firing(base, "CrawlerStalled"))
            alert = next(
                a
                for a in get_json(f"{base}/api/v1/alerts")["data"]["alerts"]
                if a["labels"]["alertname"] == "CrawlerStalled"
            )
            assert alert["labels"]["severity"] == "critical"
            assert "URLs in the frontier" in alert["annotations"]["summary"]


def check_dashboard_queries(base: str) -> None:
    """Every query of the Grafana dashboard is valid PromQL with data behind it, with the
    crawl it shows (the variable `job`) at its default, every crawl; the variable's own
    query finds the crawler's job."""
    dashboard = json.loads((DEPLOY / "grafana" / "dashboards" / "crawler.json").read_text())
    (job,) = dashboard["templating"]["list"]
    jobs = query(base, "crawler_build_info")["data"]["result"]
    assert [series["metric"]["job"] for series in jobs] == ["crawler"]
    expressions = [
        target["expr"] for panel in dashboard["panels"] for target in panel.get("targets", [])
    ]
    assert len(expressions) > 20
    for expression in expressions:
        expression = expression.replace("$job", job["allValue"])
        answer = query(base, expression.replace("$__rate_interval", "10s"))
        assert answer["status"] == "success", expression
        assert answer["data"]["result"], f"no data for {expression}"
