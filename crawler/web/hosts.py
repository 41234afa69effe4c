"""The names the API and the web page answer to. A web page a browser visits can make
its own name resolve to this machine (DNS rebinding) and then read whatever the
browser reaches there; the browser still sends that name in the Host header. So the
API and the page answer only a Host that is an IP address, `localhost`, or a name given
with `--api-host`; /metrics and /healthz answer any (Prometheus and probes ask for them
by a service's name)."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from crawler.web.errors import ApiError

ANY_HOST_PATHS = frozenset({"/metrics", "/healthz"})


def host_name(host_header: str) -> str:
    """The name of a Host header, without its port, lower case; IPv6 without brackets."""
    if host_header.startswith("["):
        return host_header[1:].partition("]")[0].lower()
    return host_header.rpartition(":")[0].lower() if ":" in host_header else host_header.lower()


def is_known_host(host_header: str, names: frozenset[str]) -> bool:
    name = host_name(host_header)
    if name == "localhost" or name in names:
        return True
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def answer_known_hosts(names: Iterable[str]) -> Middleware:
    """A middleware refusing (421) a request for the API or the page under another name."""
    known = frozenset(name.lower() for name in names)

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        host = request.headers.get("Host")
        if host is None or request.path in ANY_HOST_PATHS or is_known_host(host, known):
            return await handler(request)
        raise ApiError(
            421,
            f"this daemon does not answer to the name {host_name(host)!r}: it answers "
            "to its IP addresses, localhost and the names given with --api-host",
        )

    return middleware
