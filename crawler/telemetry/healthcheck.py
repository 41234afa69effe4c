"""`crawler healthcheck`: ask a running crawler's /healthz, where its settings serve it.

The image's HEALTHCHECK runs it (`python -m crawler.telemetry.healthcheck`, which loads
the settings and nothing of the crawl) with the crawl's own config file, so the port
asked is the `metrics_port` that file (or a CRAWLER_METRICS_PORT variable) names. A
server bound to every address (0.0.0.0 or ::) is asked on loopback.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from urllib.error import HTTPError, URLError
from urllib.request import urlopen

from crawler.config import ConfigError, CrawlConfig, build_config, read_toml

DEFAULT_TIMEOUT = 4.0  # seconds: well inside the image's HEALTHCHECK timeout

ANY_ADDRESS = {"0.0.0.0": "127.0.0.1", "": "127.0.0.1", "::": "::1"}


def health_url(config: CrawlConfig) -> str | None:
    """Where the crawler answers /healthz; None when its metrics server is off."""
    if config.metrics_port == 0:
        return None
    host = ANY_ADDRESS.get(config.metrics_host, config.metrics_host)
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{config.metrics_port}/healthz"


def check_health(url: str, *, timeout: float) -> str | None:
    """None if the crawler at `url` says it is well, else what is wrong."""
    try:
        with urlopen(url, timeout=timeout) as response:
            answer = json.load(response)
    except HTTPError as error:  # 503 while degraded: the body says what is wrong
        with error:
            return f"{url} answered {error.code}: {error.read(2048).decode(errors='replace')}"
    except (URLError, OSError, ValueError) as error:
        return f"{url}: {error}"
    if not isinstance(answer, dict) or answer.get("status") != "ok":
        return f"{url} answered {answer!r}"
    return None


def check_crawler(config_file: Path | None, *, timeout: float = DEFAULT_TIMEOUT) -> int:
    """0 if the crawler the settings describe is well, 1 if not (said on stderr)."""
    config = build_config(file_values=read_toml(config_file) if config_file else {})
    url = health_url(config)
    if url is None:
        print("metrics_port is 0: no /healthz to ask", file=sys.stderr)
        return 0
    problem = check_health(url, timeout=timeout)
    if problem is not None:
        print(f"crawler: unhealthy: {problem}", file=sys.stderr)
        return 1
    return 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", type=Path, help="the crawl's TOML file of settings")
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        help=f"seconds to wait for the answer (default {DEFAULT_TIMEOUT:g})",
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m crawler.telemetry.healthcheck", description=__doc__.split("\n")[0]
    )
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return check_crawler(args.config, timeout=args.timeout)
    except ConfigError as error:
        print(f"crawler: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
