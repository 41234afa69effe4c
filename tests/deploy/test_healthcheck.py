"""The image's HEALTHCHECK asks the crawler on the port its mounted config names."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path

from aiohttp import ClientConnectorError, ClientSession

from crawler.config import CrawlConfig
from crawler.telemetry.healthcheck import health_url
from testbed.demo import free_port
from testbed.server import Testbed
from testbed.web import WebSpec
from tests.deploy.tools import DEPLOY

MOUNTED_CONFIG = "/etc/crawler/crawl.toml"


def image_healthcheck(config: Path) -> list[str]:
    """The Dockerfile's HEALTHCHECK command, with `config` mounted where the image reads
    its config, and the console script this interpreter installed."""
    text = (DEPLOY / "Dockerfile").read_text().replace("\\\n", "")
    found = re.search(r"^HEALTHCHECK .*? CMD (\[.*\])$", text, re.M)
    assert found is not None
    argv: list[str] = json.loads(found.group(1))
    argv = [str(config) if arg == MOUNTED_CONFIG else arg for arg in argv]
    if argv[0] == "crawler":
        argv[0] = str(Path(sys.executable).parent / "crawler")
    elif argv[0] == "python":
        argv[0] = sys.executable
    return argv


async def run(argv: list[str]) -> int:
    child = await asyncio.create_subprocess_exec(*argv)
    return await asyncio.wait_for(child.wait(), timeout=60)


def crawl_toml(path: Path, *, seed: str, db: Path, port: int) -> Path:
    path.write_text(
        "[crawl]\n"
        f'seeds = ["{seed}"]\n'
        'topic = "solar energy"\n'
        f'db = "sqlite+aiosqlite:///{db}"\n'
        "delay = 0.5\n"
        'metrics_host = "127.0.0.1"\n'
        f"metrics_port = {port}\n"
        "allow_private_networks = true\n"
    )
    return path


async def test_the_healthcheck_asks_the_port_the_mounted_config_names(tmp_path: Path) -> None:
    port = free_port()
    async with Testbed(WebSpec(pages=500, hosts=2)) as bed:
        config = crawl_toml(
            tmp_path / "crawl.toml", seed=bed.seeds[0], db=tmp_path / "c.db", port=port
        )
        crawler = await asyncio.create_subprocess_exec(
            str(Path(sys.executable).parent / "crawler"), "run", "--config", str(config)
        )
        try:
            async with ClientSession() as session:
                while True:  # until the crawler serves /healthz
                    assert crawler.returncode is None, "the crawler exited"
                    try:
                        async with session.get(f"http://127.0.0.1:{port}/healthz") as response:
                            if response.status == 200:
                                break
                    except ClientConnectorError:
                        pass
                    await asyncio.sleep(0.1)
            assert await run(image_healthcheck(config)) == 0
            # a config naming a port where no crawler listens: unhealthy
            elsewhere = crawl_toml(
                tmp_path / "elsewhere.toml",
                seed=bed.seeds[0],
                db=tmp_path / "c.db",
                port=free_port(),
            )
            assert await run(image_healthcheck(elsewhere)) == 1
        finally:
            crawler.terminate()
            await asyncio.wait_for(crawler.wait(), timeout=60)


def test_a_crawler_serving_every_address_is_asked_on_loopback() -> None:
    assert health_url(CrawlConfig(metrics_host="0.0.0.0", metrics_port=9500)) == (
        "http://127.0.0.1:9500/healthz"
    )
    assert health_url(CrawlConfig(metrics_host="::", metrics_port=9500)) == (
        "http://[::1]:9500/healthz"
    )
    assert health_url(CrawlConfig(metrics_port=0)) is None
