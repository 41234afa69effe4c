"""`crawler healthcheck`: ask a running crawler's /healthz, where its settings serve it.

The image's HEALTHCHECK runs it with the crawl's own config file, so the port asked is
the `metrics_port` that file (or a CRAWLER_METRICS_PORT variable) names. A server bound
to every address (0.0.0.0 or ::) is asked on loopback.
"""

from __future__ import annotations

import json
from urllib.error import HTTPError, URLError
from urllib.request import urlopen

from crawler.config import CrawlConfig

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
