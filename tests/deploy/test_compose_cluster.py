"""docker-compose's profile `cluster`: PostgreSQL and crawlers scaled with `--scale`,
Prometheus scraping each replica. Checked by the real tools (docker-compose, promtool,
a PostgreSQL server) and the crawler's own config loader; each check is also shown
refusing a broken copy."""

from __future__ import annotations

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
from tests.deploy.test_files import run
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
