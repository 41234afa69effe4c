"""docker-compose's profile `cluster`: PostgreSQL and crawlers scaled with `--scale`,
Prometheus scraping each replica, the dashboard summing them. Checked by the real
tools (docker-compose, promtool) and the crawler's own config loader; each check is
also shown refusing a broken copy."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError

from crawler.config import build_config, read_toml
from crawler.engine.leases import default_daemon_id
from storage.database import open_engine
from tests.deploy.test_files import SECRETS, run
from tests.deploy.tools import DEPLOY, ROOT, require
from tests.postgres import running_server

CLUSTER = "crawler-cluster"  # the scalable service, and Prometheus' job for it
DEFAULT_SERVICES = {"crawler", "prometheus", "grafana"}
DASHBOARD = DEPLOY / "grafana" / "dashboards" / "crawler.json"


def compose_config(compose: str, path: Path, *profiles: str, **environ: str) -> str:
    """`docker-compose config` of the file with these profiles, $POSTGRES_PASSWORD unset
    unless given; fails if the file is refused."""
    argv = [compose, "-f", str(path)]
    for profile in profiles:
        argv += ["--profile", profile]
    env = {
        k: v for k, v in os.environ.items() if k not in ("POSTGRES_PASSWORD", "COMPOSE_PROFILES")
    }
    env = {**SECRETS, **env}  # the secrets compose requires
    checked = subprocess.run(
        [*argv, "config"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**env, **environ},
    )
    assert checked.returncode == 0, checked.stderr
    return checked.stdout


def services(rendered: str) -> dict[str, str]:
    """The rendered services' blocks, by name."""
    section = re.search(r"^services:\n((?:  .*\n)*)", rendered, re.M)
    assert section is not None, rendered
    return dict(re.findall(r"^  ([\w.-]+):\n((?:    .*\n)+)", section.group(1), re.M))


def enabled_by_default(blocks: dict[str, str]) -> set[str]:
    """The services `docker compose up` starts: those in no profile."""
    return {name for name, block in blocks.items() if "\n    profiles:" not in "\n" + block}


def cluster_faults(rendered: str) -> list[str]:
    """What keeps the profile from running PostgreSQL and N crawlers sharing a crawl."""
    blocks = services(rendered)
    faults = []
    if not {"postgres", CLUSTER} <= set(blocks):
        return [f"no postgres or {CLUSTER} service: {sorted(blocks)}"]
    postgres, crawler = blocks["postgres"], blocks[CLUSTER]
    for name, block in (("postgres", postgres), (CLUSTER, crawler)):
        if not re.search(r"^    profiles:\n    - cluster$", block, re.M):
            faults.append(f"{name} is not in profile cluster only")
        if "restart: unless-stopped" not in block:
            faults.append(f"{name} is not restarted")
    # PostgreSQL: the official image, its data on a named volume, a health check, and no
    # port beyond loopback
    if not re.search(r"^    image: postgres:15$", postgres, re.M):
        faults.append("postgres is not the official postgres:15 image")
    if not re.search(r"^    - postgres-data:/var/lib/postgresql/data(:rw)?$", postgres, re.M):
        faults.append("postgres keeps its data off the named volume")
    if not re.search(r"^    healthcheck:\n(?:      .*\n)*?      - pg_isready$", postgres, re.M):
        faults.append("postgres has no pg_isready health check")
    published = re.findall(r"^    - (\S+/tcp)$", postgres, re.M)
    if re.search(r"^    ports:", postgres, re.M) and (
        not published or any(not port.startswith("127.0.0.1:") for port in published)
    ):
        faults.append(f"postgres is published beyond loopback: {published}")
    # the crawlers: scalable (no container name, no host port), started once PostgreSQL
    # answers, each reading the cluster's settings where the image's command looks
    if "container_name:" in crawler:
        faults.append(f"{CLUSTER} has a container name: it cannot be scaled")
    if re.search(r"^    ports:", crawler, re.M):
        faults.append(f"{CLUSTER} publishes a host port: replicas would clash")
    if "    expose:\n    - '9410'" not in crawler:
        faults.append(f"{CLUSTER} does not expose its metrics port to Prometheus")
    if not re.search(
        r"^    depends_on:\n      postgres:\n        condition: service_healthy$", crawler, re.M
    ):
        faults.append(f"{CLUSTER} does not wait for postgres to be healthy")
    mount = re.search(r"^    - (\S+):/etc/crawler/crawl.toml:ro$", crawler, re.M)
    if mount is None or Path(mount.group(1)) != DEPLOY / "crawl-cluster.toml":
        faults.append(f"{CLUSTER} does not read deploy/crawl-cluster.toml")
    if "dockerfile: deploy/Dockerfile" not in crawler:
        faults.append(f"{CLUSTER} is not the crawler's image")
    # the one password, from $POSTGRES_PASSWORD, for the server and the crawlers
    server = re.search(r"^      POSTGRES_PASSWORD: (.*)$", postgres, re.M)
    client = re.search(r"^      PGPASSWORD: (.*)$", crawler, re.M)
    if server is None or client is None or server.group(1) != client.group(1):
        faults.append("postgres and the crawlers do not share one password")
    return faults


@pytest.mark.slow
def test_the_cluster_profile_runs_postgres_and_scalable_crawlers(tmp_path: Path) -> None:
    compose = require("docker-compose")
    rendered = compose_config(compose, ROOT / "docker-compose.yml", "cluster")
    assert cluster_faults(rendered) == []
    blocks = services(rendered)
    assert set(blocks) == DEFAULT_SERVICES | {"postgres", CLUSTER}
    assert "POSTGRES_PASSWORD: crawler" in blocks["postgres"]  # the default, as Grafana's
    chosen = services(
        compose_config(compose, ROOT / "docker-compose.yml", "cluster", POSTGRES_PASSWORD="s3cret")
    )
    assert "POSTGRES_PASSWORD: s3cret" in chosen["postgres"]
    assert "PGPASSWORD: s3cret" in chosen[CLUSTER]

    # the checks find faults: a container name, a public port, no wait for health
    source = (ROOT / "docker-compose.yml").read_text()
    cluster_block = source[source.index(f"  {CLUSTER}:\n") :]
    broken = {
        "named": source.replace(
            f"  {CLUSTER}:\n", f"  {CLUSTER}:\n    container_name: crawler-1\n"
        ),
        "public": source.replace(
            '      - "5432"  # the compose network only\n',
            '      - "5432"\n    ports:\n      - "5432:5432"\n',
        ),
        "unhealthy": source.replace("condition: service_healthy", "condition: service_started"),
        "ported": source.replace(
            cluster_block,
            cluster_block.replace(
                "    expose:\n", '    ports:\n      - "9410:9410"\n    expose:\n', 1
            ),
        ),
    }
    for name, changed in broken.items():
        assert changed != source, name
        copy = tmp_path / f"{name}.yml"
        copy.write_text(changed)
        assert cluster_faults(compose_config(compose, copy, "cluster")) != [], name
    # and docker-compose itself refuses a wrong condition
    copy = tmp_path / "invalid.yml"
    copy.write_text(source.replace("condition: service_healthy", "condition: when_ready"))
    assert run(compose, "-f", str(copy), "--profile", "cluster", "config", "-q").returncode != 0


def test_without_the_profile_compose_runs_what_it_ran(tmp_path: Path) -> None:
    compose = require("docker-compose")
    blocks = services(compose_config(compose, ROOT / "docker-compose.yml"))
    # one SQLite crawler, Prometheus, Grafana: postgres and the cluster's crawlers wait
    # for their profile (docker-compose v1 renders them marked; v2 leaves them out)
    assert enabled_by_default(blocks) == DEFAULT_SERVICES
    assert "/deploy/crawl.toml:/etc/crawler/crawl.toml:ro" in blocks["crawler"]
    assert "crawl-data:/data" in blocks["crawler"]
    assert "postgres" not in blocks["crawler"]
    # the check can fail: postgres out of its profile would start with `up`
    copy = tmp_path / "docker-compose.yml"
    source = (ROOT / "docker-compose.yml").read_text()
    copy.write_text(
        source.replace(
            '    image: postgres:15\n    profiles: ["cluster"]\n', "    image: postgres:15\n"
        )
    )
    assert enabled_by_default(services(compose_config(compose, copy))) == DEFAULT_SERVICES | {
        "postgres"
    }


def settings_faults(values: dict[str, Any]) -> list[str]:
    """What keeps these settings (crawl-cluster.toml's) from being crawl.toml's crawl,
    shared by the replicas through compose's PostgreSQL."""
    config = build_config(file_values=values, environ={})  # the crawler's own loader
    config.check_runnable()
    url = make_url(config.db)
    compose = (ROOT / "docker-compose.yml").read_text()
    faults = []
    if url.drivername != "postgresql+asyncpg":
        faults.append(f"db {config.db!r} is not PostgreSQL (asyncpg)")
    # the compose service, and the user and database the image makes
    if (url.host, url.port) != ("postgres", None):
        faults.append(f"db {config.db!r} is not compose's service postgres")
    if f"POSTGRES_USER: {url.username}\n" not in compose:
        faults.append(f"db user {url.username!r} is not the one the image makes")
    if f"POSTGRES_DB: {url.database}\n" not in compose:
        faults.append(f"db {url.database!r} is not the one the image makes")
    if url.password is not None:
        faults.append("the password is in the file: PGPASSWORD, from compose, gives it")
    # every replica reads this file: a daemon id here would be every replica's
    if config.daemon_id is not None:
        faults.append(f"daemon_id {config.daemon_id!r} would be every replica's")
    if (config.metrics_host, config.metrics_port) != ("0.0.0.0", 9410):
        faults.append("metrics are not served where Prometheus scrapes them")
    # the same crawl as the single crawler's: only the database differs
    single = read_toml(DEPLOY / "crawl.toml")
    single.pop("db")
    if {k: v for k, v in values.items() if k != "db"} != single:
        faults.append("the crawl is not crawl.toml's")
    return faults


def test_the_cluster_settings_are_the_crawl_on_postgresql(monkeypatch: pytest.MonkeyPatch) -> None:
    shared = read_toml(DEPLOY / "crawl-cluster.toml")
    assert settings_faults(shared) == []
    # no daemon id: each replica takes the default, its container's hostname (one per
    # replica) with a random suffix
    monkeypatch.setattr(socket, "gethostname", lambda: "3f2a9c1b7d4e")
    first, second = default_daemon_id(), default_daemon_id()
    assert first.startswith("3f2a9c1b7d4e-")
    assert second.startswith("3f2a9c1b7d4e-")
    assert first != second
    # broken copies are refused
    for change in (
        {"db": "sqlite+aiosqlite:////data/crawl.db"},
        {"db": "postgresql+asyncpg://crawler:crawler@postgres/crawl"},
        {"db": "postgresql+asyncpg://crawler@localhost/crawl"},
        {"daemon_id": "crawler-1"},
        {"topic": "wind energy"},
    ):
        assert settings_faults({**shared, **change}) != [], change


async def test_a_url_without_password_takes_it_from_pgpassword(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The crawlers' database URL names no password: libpq's variable PGPASSWORD gives
    it, as docker-compose.yml sets it, whatever characters it holds."""
    password = "s3cret/@:?#%"
    monkeypatch.setenv("PGPASSFILE", str(tmp_path / "none"))
    with running_server(password=password) as server:
        url = server.url("postgres")
        assert make_url(url).password is None

        async def refusal() -> str:
            """Why the crawler's engine cannot connect; empty if it can."""
            engine = open_engine(url)
            try:
                async with engine.connect() as connection:
                    assert (await connection.execute(text("SELECT 1"))).scalar() == 1
                return ""
            except DBAPIError as error:
                return str(error)
            finally:
                await engine.dispose()

        monkeypatch.delenv("PGPASSWORD", raising=False)
        assert "password" in await refusal()
        monkeypatch.setenv("PGPASSWORD", "wrong")
        assert "password authentication failed" in await refusal()
        monkeypatch.setenv("PGPASSWORD", password)
        assert await refusal() == ""


def prometheus_jobs(config: str) -> dict[str, str]:
    """prometheus.yml's scrape jobs' blocks, by name."""
    return dict(re.findall(r"^  - job_name: (\S+)\n((?:    .*\n|\s*\n)+)", config, re.M))


def dns_job_faults(config: str) -> list[str]:
    jobs = prometheus_jobs(config)
    faults = []
    if 'targets: ["crawler:9410"]' not in jobs.get("crawler", ""):
        faults.append("the single crawler's job is gone")
    job = jobs.get(CLUSTER, "")
    # each replica its own target: the service's name resolves to all of them
    if not re.search(rf'^    dns_sd_configs:\n      - names: \["{CLUSTER}"\]$', job, re.M):
        faults.append(f"job {CLUSTER} does not discover the replicas of service {CLUSTER}")
    if not re.search(r"^        type: A$", job, re.M) or not re.search(
        r"^        port: 9410$", job, re.M
    ):
        faults.append(f"job {CLUSTER} does not ask A records on port 9410")
    if "static_configs" in job:
        faults.append(f"job {CLUSTER} has a fixed target: one replica, whichever answers")
    return faults


def test_prometheus_finds_each_replica_by_dns(tmp_path: Path) -> None:
    promtool = require("promtool")
    config = DEPLOY / "prometheus" / "prometheus.yml"
    checked = run(promtool, "check", "config", str(config))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert dns_job_faults(config.read_text()) == []
    # the port scraped is the one the settings serve metrics on
    assert (
        build_config(file_values=read_toml(DEPLOY / "crawl-cluster.toml"), environ={}).metrics_port
        == 9410
    )

    # the checks fail on broken copies: promtool on a record type it does not know, the
    # structure on a fixed target
    (tmp_path / "alerts.yml").write_text((DEPLOY / "prometheus" / "alerts.yml").read_text())
    bad_type = tmp_path / "prometheus.yml"
    bad_type.write_text(config.read_text().replace("type: A\n", "type: CNAME\n"))
    assert run(promtool, "check", "config", str(bad_type)).returncode != 0
    fixed = config.read_text().replace(
        f'dns_sd_configs:\n      - names: ["{CLUSTER}"]\n        type: A\n        port: 9410\n',
        f'static_configs:\n      - targets: ["{CLUSTER}:9410"]\n',
    )
    assert fixed != config.read_text()
    assert dns_job_faults(fixed) != []


# The dashboard's queries, evaluated by promtool over two daemons of job crawler-cluster
# (1 and 2 pages a second; gauges 10 and 20) beside a crawl of job crawler (100 a
# second; 1,000) that the dashboard's job variable leaves out. A query of the crawl sums
# the daemons (3; 30); a query by daemon gives each (1 and 2; 10 and 20). The relevance
# and fetch-time histograms: the first daemon's observations all at most 0.5, the
# second's between 0.5 and 1, 2 a second each: the crawl's quantiles are 0.5 (median),
# 0.9 and 0.99, neither daemon's alone (0.25 and 0.75 for the median).
DAEMONS = {"10.0.0.2:9410": (1, 10), "10.0.0.3:9410": (2, 20)}
OTHER_CRAWL = ("crawler", "crawler:9410", 100, 1_000)
QUANTILES = {"0.5": 0.5, "0.9": 0.9, "0.99": 0.99}
SUMMED = re.compile(
    r"^(?P<op>\w+)(?: by \((?P<by>\w+)\) )?\((?P<rate>rate\()?(?P<metric>\w+)"
    r"(?:\{[^}]*\})?(?(rate)\[\$__rate_interval\]\))\)$"
)
QUANTILE = re.compile(
    r"^histogram_quantile\((?P<q>[0-9.]+), sum by \(le\) \(rate\((?P<metric>\w+_bucket)"
    r"(?:\{[^}]*\})?\[\$__rate_interval\]\)\)\)$"
)


def dashboard_targets(dashboard: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(panel title, expression, legend) of every query."""
    return [
        (panel["title"], target["expr"], target.get("legendFormat", ""))
        for panel in dashboard["panels"]
        for target in panel.get("targets", [])
    ]


def dashboard_faults(dashboard: dict[str, Any]) -> list[str]:
    """Queries that neither sum the daemons nor show each: those would draw a line per
    daemon under one name, or leave out all but one."""
    faults = []
    for title, expr, legend in dashboard_targets(dashboard):
        shape = SUMMED.match(expr) or QUANTILE.match(expr)
        if shape is None:
            faults.append(f"{title}: {expr} is not aggregated over the daemons")
        elif (shape.groupdict().get("by") == "instance") != ("{{instance}}" in legend):
            faults.append(f"{title}: {expr} by daemon, or its legend, not both")
    variables = {v["name"]: v for v in dashboard.get("templating", {}).get("list", [])}
    job = variables.get("job", {})
    if job.get("definition") != "label_values(crawler_build_info, job)":
        faults.append("no variable choosing the crawl (Prometheus job)")
    return faults


def promtool_test(dashboard: dict[str, Any], job: str) -> str:
    """A promtool unit test of every query of the dashboard, as the comment above says."""
    series: dict[str, str] = {}  # series -> values
    tests: list[str] = []

    def add(metric: str, labels: dict[str, str], values: str) -> None:
        inner = ", ".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
        series[f"{metric}{{{inner}}}"] = values

    def expect(samples: list[tuple[dict[str, str], float]]) -> str:
        lines = []
        for labels, value in samples:
            inner = ", ".join(f'{k}="{v}"' for k, v in labels.items())
            lines += [
                f"          - labels: '{{{inner}}}'",
                f"            value: {round(value * 1000)}",
            ]
        return "\n".join(lines)

    other_job, other_instance, other_rate, other_gauge = OTHER_CRAWL
    for _, expr, _ in dashboard_targets(dashboard):
        query = expr.replace("$job", job).replace("$__rate_interval", "5m")
        if match := QUANTILE.match(expr):
            bucket = match["metric"]
            first, second = list(DAEMONS)
            for le in ("0.5", "1", "+Inf"):
                add(bucket, {"job": CLUSTER, "instance": first, "le": le}, "0+120x10")
                add(
                    bucket,
                    {"job": CLUSTER, "instance": second, "le": le},
                    "0x10" if le == "0.5" else "0+120x10",
                )
                add(bucket, {"job": other_job, "instance": other_instance, "le": le}, "0+6000x10")
            samples = [({}, QUANTILES[match["q"]])]
        else:
            match = SUMMED.match(expr)
            assert match is not None, expr
            by, counter = match["by"], match["rate"] is not None
            extra = {by: "x"} if by not in (None, "instance") else {}
            for instance, (rate, gauge) in DAEMONS.items():
                values = f"0+{rate * 60}x10" if counter else f"{gauge}x10"
                add(match["metric"], {"job": CLUSTER, "instance": instance, **extra}, values)
            values = f"0+{other_rate * 60}x10" if counter else f"{other_gauge}x10"
            add(match["metric"], {"job": other_job, "instance": other_instance, **extra}, values)
            each = {
                instance: rate if counter else gauge for instance, (rate, gauge) in DAEMONS.items()
            }
            if by == "instance":
                samples = [({"instance": instance}, value) for instance, value in each.items()]
            else:
                samples = [(extra, sum(each.values()))]
        tests.append(
            f"      - expr: {json.dumps(f'round(({query}) * 1000)')}\n"
            "        eval_time: 10m\n"
            "        exp_samples:\n" + expect(samples)
        )
    inputs = "\n".join(
        f"      - series: {json.dumps(name)}\n        values: {json.dumps(values)}"
        for name, values in series.items()
    )
    return (
        "tests:\n  - interval: 1m\n    input_series:\n"
        + inputs
        + "\n    promql_expr_test:\n"
        + "\n".join(tests)
        + "\n"
    )


def test_the_dashboard_sums_the_daemons_of_a_crawl(tmp_path: Path) -> None:
    promtool = require("promtool")
    dashboard = json.loads(DASHBOARD.read_text())
    assert dashboard_faults(dashboard) == []
    by_title = {title: expr for title, expr, _ in dashboard_targets(dashboard)}
    assert "by (instance)" in by_title["Pages stored a second, by daemon"]
    # the crawl's totals are sums; the default is every crawl, one at a time in practice
    for title in (
        "Frontier size",
        "Pages stored and relevant a second",
        "New URLs discovered a second",
    ):
        assert by_title[title].startswith("sum("), title
    (job,) = dashboard["templating"]["list"]
    assert (job["includeAll"], job["current"]["value"], job["allValue"]) == (True, "$__all", ".+")

    def evaluate(board: dict[str, Any], name: str) -> subprocess.CompletedProcess[str]:
        (tmp_path / name).write_text(promtool_test(board, CLUSTER))
        return subprocess.run(
            [promtool, "test", "rules", name],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )

    checked = evaluate(dashboard, "dashboard.test.yml")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.count("SUCCESS") == 1

    # each check fails on a broken copy: a gauge not summed, the crawl's frontier as its
    # largest daemon's, a query not kept to the chosen crawl
    source = DASHBOARD.read_text()
    frontier = 'sum(crawler_frontier_size{job=~\\"$job\\"})'
    assert frontier in source
    for name, replacement, refused_by in (
        ("bare", 'crawler_frontier_size{job=~\\"$job\\"}', "faults"),
        ("max", 'max(crawler_frontier_size{job=~\\"$job\\"})', "promtool"),
        ("every-job", "sum(crawler_frontier_size)", "promtool"),
    ):
        board = json.loads(source.replace(frontier, replacement))
        if refused_by == "faults":
            assert dashboard_faults(board) != [], name
        else:
            assert dashboard_faults(board) == [], name
            assert evaluate(board, f"{name}.test.yml").returncode != 0, name
