"""Host names resolved without blocking the event loop, each answer kept for its TTL.

Lookups go through c-ares (aiodns): its one thread waits for every lookup at once and
hands the answers to the event loop, and the answers carry their TTLs, which aiohttp's
own resolvers drop (its cache keeps every answer a fixed time). aiohttp's threaded
resolver holds a thread of the loop's pool (6 on 2 cores) for each lookup's whole round
trip instead, which caps lookups at once at that pool: on loopback, where a round trip
costs nothing, threads look up faster (docs/benchmarks.md), but across a network it is
the round trip that counts, tens of milliseconds, and the cap.

Without `nameservers` c-ares reads the system's configuration (/etc/resolv.conf,
/etc/hosts); with them ("HOST" or "HOST:PORT") it asks those alone,
which is how the tests and benchmarks point a crawl at a DNS server on loopback.

- An answer is kept for its TTL, within [`MIN_TTL`, `MAX_TTL`]; a name that does not
  resolve, for `NEGATIVE_TTL`, so that its host's other URLs fail at once without asking
  again. At most `capacity` names are kept, the least recently used leaving first.
- One lookup a name at a time: visits that want a name being looked up wait for that
  answer. At most `max_in_flight` lookups run at once; the rest wait their turn.
- A name that does not resolve raises `OSError`, which aiohttp reports as its
  `ClientConnectorDNSError`: the fetcher makes it the URL's `dns_error` outcome.

The network guard (`crawler.fetch.netguard`) still judges every address: the resolver
feeds its `GuardedResolver`, and the socket factory checks the address connected to.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence

import aiodns
from aiohttp.abc import AbstractResolver, ResolveResult

MIN_TTL = 5.0  # seconds: an answer of TTL 0 is not looked up again at every request
MAX_TTL = 3600.0  # seconds: a host that moves is found again within the hour
NEGATIVE_TTL = 60.0  # seconds a name that does not resolve is not asked again
DNS_CACHE_NAMES = 200_000  # names kept; a name and its addresses take about 1 KB
DNS_LOOKUPS_AT_ONCE = 64


class CachingResolver(AbstractResolver):
    def __init__(
        self,
        *,
        nameservers: Sequence[str] = (),
        max_in_flight: int = DNS_LOOKUPS_AT_ONCE,
        capacity: int = DNS_CACHE_NAMES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.nameservers = tuple(nameservers)
        self.capacity = capacity
        self.clock = clock
        self._slots = asyncio.Semaphore(max_in_flight)
        # (name, family) -> (expires at, answers, or why the name did not resolve)
        self._answers: OrderedDict[tuple[str, int], tuple[float, list[ResolveResult] | str]] = (
            OrderedDict()
        )
        self._asking: dict[tuple[str, int], asyncio.Future[list[ResolveResult]]] = {}
        self.lookups = 0  # asked of the DNS, not answered from memory
        self._resolver = _dns_resolver(self.nameservers)

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        key = (host, int(family))
        kept = self._answers.get(key)
        if kept is not None and kept[0] > self.clock():
            self._answers.move_to_end(key)
            return _with_port(kept[1], port)
        asking = self._asking.get(key)
        if asking is None:
            asking = self._asking[key] = asyncio.ensure_future(self._look_up(host, family))
            asking.add_done_callback(lambda done: self._asked(key, done))
        # shielded: a visit cancelled while it waits leaves the others their answer
        return _with_port(await asyncio.shield(asking), port)

    def _asked(self, key: tuple[str, int], done: asyncio.Future[list[ResolveResult]]) -> None:
        del self._asking[key]
        if not done.cancelled():
            done.exception()  # seen here, if no visit waits for it any longer

    async def _look_up(self, host: str, family: socket.AddressFamily) -> list[ResolveResult]:
        async with self._slots:
            self.lookups += 1
            try:
                answer = await self._resolver.getaddrinfo(
                    host, family=family, port=0, type=socket.SOCK_STREAM
                )
            except aiodns.error.DNSError as error:
                reason = error.args[1] if len(error.args) > 1 else "DNS lookup failed"
                self._keep((host, int(family)), NEGATIVE_TTL, f"{host}: {reason}")
                raise OSError(None, f"{host}: {reason}") from None
        results = [_result(host, node) for node in answer.nodes]
        ttl = min((node.ttl for node in answer.nodes), default=0)
        self._keep((host, int(family)), min(max(float(ttl), MIN_TTL), MAX_TTL), results)
        return results

    def _keep(self, key: tuple[str, int], ttl: float, answer: list[ResolveResult] | str) -> None:
        self._answers[key] = (self.clock() + ttl, answer)
        self._answers.move_to_end(key)
        while len(self._answers) > self.capacity:
            self._answers.popitem(last=False)

    async def close(self) -> None:
        for asking in list(self._asking.values()):
            asking.cancel()
        await self._resolver.close()


def _dns_resolver(nameservers: Sequence[str]) -> aiodns.DNSResolver:
    """c-ares asking `nameservers`, "HOST" or "HOST:PORT" (one port for all); without
    them, the system's configuration."""
    if not nameservers:
        return aiodns.DNSResolver()
    hosts, ports = [], set()
    for server in nameservers:
        if server.startswith("["):  # [IPv6]:PORT
            host, _, port = server[1:].partition("]")
            port = port.removeprefix(":")
        elif server.count(":") == 1:  # IPv4:PORT, NAME:PORT
            host, _, port = server.partition(":")
        else:  # a bare address, IPv6 included
            host, port = server, ""
        hosts.append(host)
        ports.add(int(port) if port else 53)
    if len(ports) > 1:
        raise ValueError(f"the DNS servers must share one port, not {sorted(ports)}")
    (shared,) = ports
    return aiodns.DNSResolver(nameservers=hosts, udp_port=shared, tcp_port=shared)


def _result(host: str, node: object) -> ResolveResult:
    address = node.addr  # type: ignore[attr-defined]
    return ResolveResult(
        hostname=host,
        host=address[0].decode("ascii"),
        port=0,
        family=node.family,  # type: ignore[attr-defined]
        proto=0,
        flags=socket.AI_NUMERICHOST | socket.AI_NUMERICSERV,
    )


def _with_port(answer: list[ResolveResult] | str, port: int) -> list[ResolveResult]:
    if isinstance(answer, str):  # a name that did not resolve, kept
        raise OSError(None, answer)
    return [ResolveResult(**{**result, "port": port}) for result in answer]  # type: ignore[typeddict-item]
