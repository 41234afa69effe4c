"""`CachingResolver` against a real DNS server on loopback (dnsmasq), its queries
counted where they arrive; its own lookups (`lookups`) counted where its cache is the
point (c-ares keeps answers for their real TTL too, and the tests move a clock)."""

from __future__ import annotations

import asyncio
import socket

import pytest

from crawler.fetch.resolver import MIN_TTL, NEGATIVE_TTL, CachingResolver
from tests.dns import dns_server


async def test_an_answer_is_kept_for_its_ttl_and_asked_again_after() -> None:
    now = [0.0]
    with dns_server({"a.crawl.test": "127.0.0.5"}, ttl=30) as dns:
        resolver = CachingResolver(nameservers=[dns.address], clock=lambda: now[0])
        try:
            answers = await resolver.resolve("a.crawl.test", 8080, socket.AF_INET)
            assert [(a["host"], a["port"]) for a in answers] == [("127.0.0.5", 8080)]
            now[0] = 29.0
            again = await resolver.resolve("a.crawl.test", 80, socket.AF_INET)
            assert [(a["host"], a["port"]) for a in again] == [("127.0.0.5", 80)]
            assert dns.queries("a.crawl.test") == resolver.lookups == 1
            now[0] = 31.0  # past its TTL
            await resolver.resolve("a.crawl.test", 80, socket.AF_INET)
            assert resolver.lookups == 2
        finally:
            await resolver.close()


async def test_a_ttl_of_zero_is_kept_a_few_seconds() -> None:
    now = [0.0]
    with dns_server({"zero.crawl.test": "127.0.0.6"}, ttl=0) as dns:
        resolver = CachingResolver(nameservers=[dns.address], clock=lambda: now[0])
        try:
            for step in range(5):
                now[0] = step * (MIN_TTL / 5)
                await resolver.resolve("zero.crawl.test", 80, socket.AF_INET)
            assert dns.queries("zero.crawl.test") == resolver.lookups == 1
        finally:
            await resolver.close()


async def test_visits_wanting_one_name_at_once_share_one_lookup() -> None:
    with dns_server({"b.crawl.test": "127.0.0.7"}) as dns:
        resolver = CachingResolver(nameservers=[dns.address])
        try:
            answers = await asyncio.gather(
                *(resolver.resolve("b.crawl.test", 80, socket.AF_INET) for _ in range(20))
            )
            assert {a[0]["host"] for a in answers} == {"127.0.0.7"}
            assert dns.queries("b.crawl.test") == 1
            assert resolver.lookups == 1
        finally:
            await resolver.close()


async def test_a_name_that_does_not_resolve_fails_at_once_until_asked_again() -> None:
    now = [0.0]
    with dns_server({"c.crawl.test": "127.0.0.8"}) as dns:
        resolver = CachingResolver(nameservers=[dns.address], clock=lambda: now[0])
        try:
            for _ in range(3):
                with pytest.raises(OSError, match=r"missing\.crawl\.test"):
                    await resolver.resolve("missing.crawl.test", 80, socket.AF_INET)
            assert dns.queries("missing.crawl.test") == resolver.lookups == 1
            now[0] = NEGATIVE_TTL + 1
            with pytest.raises(OSError, match=r"missing\.crawl\.test"):
                await resolver.resolve("missing.crawl.test", 80, socket.AF_INET)
            assert resolver.lookups == 2
        finally:
            await resolver.close()


async def test_the_names_kept_are_bounded_the_least_recently_used_leaving() -> None:
    names = {f"n{i}.crawl.test": f"127.0.1.{i}" for i in range(1, 6)}
    with dns_server(names) as dns:
        resolver = CachingResolver(nameservers=[dns.address], capacity=3)
        try:
            for name in names:
                await resolver.resolve(name, 80, socket.AF_INET)
            await resolver.resolve("n5.crawl.test", 80, socket.AF_INET)  # kept
            assert resolver.lookups == 5
            await resolver.resolve("n1.crawl.test", 80, socket.AF_INET)  # gone: asked again
            assert resolver.lookups == 6
        finally:
            await resolver.close()


@pytest.mark.parametrize(
    "servers", [["127.0.0.1:53", "127.0.0.2:54"], ["127.0.0.1:5353", "[::1]:53"]]
)
async def test_dns_servers_on_different_ports_are_refused(servers: list[str]) -> None:
    with pytest.raises(ValueError, match="one port"):
        CachingResolver(nameservers=servers)
