"""The deployment files, checked by the real tools: compose, hadolint, promtool."""

from __future__ import annotations

import json
import os
import re
import subprocess
import tomllib
from pathlib import Path

from crawler.cli import build_parser
from crawler.config import build_config, read_toml
from tests.deploy.tools import DEPLOY, ROOT, require

# the secrets compose asks of the environment, and values for them
SECRETS = {
    "CRAWLER_API_TOKEN": "t0ken-for-the-compose-tests",
    "GRAFANA_ADMIN_PASSWORD": "pw-4-tests",
}


def run(
    *argv: str, cwd: Path = ROOT, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`argv`, with the compose file's secrets in the environment unless `env` is given."""
    outside = {k: v for k, v in os.environ.items() if k not in SECRETS}
    environ = {**outside, **SECRETS} if env is None else {**outside, **env}
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=120, env=environ)


def test_the_compose_file_is_valid_and_publishes_on_loopback_only(tmp_path: Path) -> None:
    compose = require("docker-compose")
    checked = run(compose, "-f", "docker-compose.yml", "config")
    assert checked.returncode == 0, checked.stderr
    rendered = checked.stdout
    services = dict(re.findall(r"^  (\w+):\n((?:    .*\n)+)", rendered, re.M))
    assert set(services) >= {"crawler", "prometheus", "grafana"}
    # the crawler's server (metrics, API, web page) and the others on loopback only
    assert "    expose:\n    - '9410'" in services["crawler"]
    for name in ("crawler", "prometheus", "grafana"):
        ports = re.findall(r"^    - (\S+/tcp)$", services[name], re.M)
        assert ports
        assert all(port.startswith("127.0.0.1:") for port in ports), name
    assert "127.0.0.1:9410:9410/tcp" in services["crawler"]
    for block in services.values():
        assert "restart: unless-stopped" in block
    # a broken copy is refused: the check can fail
    broken = tmp_path / "docker-compose.yml"
    broken.write_text(
        (ROOT / "docker-compose.yml")
        .read_text()
        .replace("restart: unless-stopped", "restart: 7", 1)
    )
    assert run(compose, "-f", str(broken), "config", "-q").returncode != 0


def test_the_dockerfile_passes_hadolint(tmp_path: Path) -> None:
    hadolint = require("hadolint")
    checked = run(hadolint, str(DEPLOY / "Dockerfile"))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    text = (DEPLOY / "Dockerfile").read_text()
    assert re.search(r"^FROM python:3\.\d+\.\d+-slim-bookworm(@sha256:[0-9a-f]{64})?$", text, re.M)
    assert re.search(r"^USER \d+$", text, re.M)  # not root
    assert "HEALTHCHECK" in text
    assert "/healthz" in text
    # the linter does find faults
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM python:latest\nRUN apt-get install curl\n")
    assert run(hadolint, str(bad)).returncode != 0


def test_the_image_command_is_a_valid_crawler_command() -> None:
    cmd = re.search(r"^CMD \[(.*)\]$", (DEPLOY / "Dockerfile").read_text(), re.M)
    assert cmd is not None
    argv = json.loads(f"[{cmd.group(1)}]")
    assert argv[:2] == ["crawler", "run"]
    args = build_parser().parse_args(argv[1:])
    assert args.config == Path("/etc/crawler/crawl.toml")
    # the config the compose file mounts there is valid and runnable
    config = build_config(file_values=read_toml(DEPLOY / "crawl.toml"), environ={})
    config.check_runnable()
    assert config.db.startswith("sqlite+aiosqlite:////data/")  # on the volume
    assert config.metrics_port == 9410
    with (DEPLOY / "crawl.toml").open("rb") as handle:
        assert "crawl" in tomllib.load(handle)


def test_prometheus_config_and_rules_pass_promtool() -> None:
    promtool = require("promtool")
    prometheus = DEPLOY / "prometheus"
    config = run(promtool, "check", "config", str(prometheus / "prometheus.yml"))
    assert config.returncode == 0, config.stdout + config.stderr
    rules = run(promtool, "check", "rules", str(prometheus / "alerts.yml"))
    assert rules.returncode == 0, rules.stdout + rules.stderr
    assert "SUCCESS: 5 rules found" in rules.stdout
    unit = run(promtool, "test", "rules", "alerts.test.yml", cwd=prometheus)
    assert unit.returncode == 0, unit.stdout + unit.stderr


def test_grafana_is_provisioned_with_prometheus_and_the_dashboard() -> None:
    grafana = DEPLOY / "grafana"
    source = (grafana / "provisioning" / "datasources" / "prometheus.yml").read_text()
    assert "url: http://prometheus:9090" in source
    assert "uid: prometheus" in source
    provider = (grafana / "provisioning" / "dashboards" / "crawler.yml").read_text()
    assert "path: /var/lib/grafana/dashboards" in provider
    dashboard = json.loads((grafana / "dashboards" / "crawler.json").read_text())
    titles = {panel["title"] for panel in dashboard["panels"]}
    for row in (
        "Throughput",
        "Frontier and politeness",
        "Fetcher controller",
        "Re-visit scheduler",
    ):
        assert row in titles
    ids = [panel["id"] for panel in dashboard["panels"]]
    assert len(ids) == len(set(ids))


def test_the_api_token_and_grafana_password_come_from_the_environment() -> None:
    compose = require("docker-compose")
    checked = run(compose, "-f", "docker-compose.yml", "config")
    assert checked.returncode == 0, checked.stderr
    services = dict(re.findall(r"^  (\w+):\n((?:    .*\n)+)", checked.stdout, re.M))
    assert f"CRAWLER_API_TOKEN: {SECRETS['CRAWLER_API_TOKEN']}" in services["crawler"]
    password = f"GF_SECURITY_ADMIN_PASSWORD: {SECRETS['GRAFANA_ADMIN_PASSWORD']}"
    assert password in services["grafana"]
    # without either, compose refuses to start, naming it: no default token, no admin/admin
    for name in SECRETS:
        missing = run(
            compose, "-f", "docker-compose.yml", "config", "-q", env={**SECRETS, name: ""}
        )
        assert missing.returncode != 0, name
        assert name in missing.stderr, missing.stderr
