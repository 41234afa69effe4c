from __future__ import annotations

import socket

import pytest
from aiohttp.abc import AbstractResolver, ResolveResult

from crawler.fetch.netguard import GuardedResolver, NetworkGuard, PrivateNetworkError
from tests.crawler.helpers import SEEN, collection, crawl, html, links, redirect, serving, site

# hosts that carry the metadata address, or loopback beside the crawl's own, in IPv6
CARRIERS = {
    "/to-nat64": "64:ff9b::a9fe:a9fe",
    "/to-local-nat64": "64:ff9b:1::a9fe:a9fe",
    "/to-6to4": "2002:a9fe:a9fe::1",
    "/to-compatible": "::7f00:2",
    "/to-translated": "::ffff:0:a9fe:a9fe",
}


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "10.1.2.3",
        "192.168.0.1",
        "172.16.5.4",
        "169.254.169.254",
        "::1",
        "fe80::1",
        "fc00::1",
        "::ffff:127.0.0.1",
        "0.0.0.0",
        "100.64.0.1",
    ],
)
def test_private_loopback_link_local_and_metadata_addresses_are_refused(address: str) -> None:
    assert not NetworkGuard().permits(address)


@pytest.mark.parametrize(
    "address",
    [
        "64:ff9b::a9fe:a9fe",  # NAT64 (RFC 6052) to the metadata address
        "64:ff9b::10.0.0.1",
        "64:ff9b:1::127.0.0.1",  # local-use NAT64 (RFC 8215)
        "64:ff9b:1::93.184.216.34",  # local use: not global, whatever it carries
        "2002:a9fe:a9fe::1",  # 6to4 (RFC 3056) to the metadata address
        "2002:c0a8:1::",
        "::169.254.169.254",  # IPv4-compatible
        "::127.0.0.1",
        "::ffff:0:169.254.169.254",  # IPv4-translated (RFC 2765)
        "::ffff:0:10.0.0.1",
    ],
)
def test_an_ipv6_address_that_carries_a_refused_ipv4_is_refused(address: str) -> None:
    assert not NetworkGuard().permits(address)


@pytest.mark.parametrize(
    "address",
    [
        "2001:0:5db8:d822:0:ffff:80ff:fffe",  # Teredo: client 127.0.0.1 (bits inverted)
        "2001:0:a9fe:a9fe:0:ffff:a247:27dd",  # Teredo: server 169.254.169.254
        "2002:a00:1::1",  # 6to4: 10.0.0.1
        "64:ff9b::a9fe:a9fe",
    ],
)
def test_an_allowed_ipv6_network_does_not_open_the_ipv4_its_addresses_carry(
    address: str,
) -> None:
    guard = NetworkGuard(allowed=["2001::/32", "2002::/16", "64:ff9b::/96"])
    assert not guard.permits(address)


def test_the_ipv4_an_ipv6_address_carries_is_judged_as_itself() -> None:
    assert NetworkGuard(allowed=["10.0.0.0/8"]).permits("64:ff9b::10.1.2.3")
    assert NetworkGuard(allow_private=True).permits("2002:a9fe:a9fe::1")
    teredo = NetworkGuard(allowed=["2001::/32"])
    assert teredo.permits("2001:0:5db8:d822:0:ffff:a201:56fe")  # both ends public


def test_public_addresses_are_permitted() -> None:
    guard = NetworkGuard()
    assert guard.permits("93.184.216.34")
    assert guard.permits("2606:4700::1111")
    assert guard.permits("::ffff:93.184.216.34")
    assert guard.permits("64:ff9b::93.184.216.34")  # NAT64 to a public address
    assert guard.permits("2002:5db8:d822::1")  # 6to4 from a public address


def test_allowed_networks_open_exactly_those_networks() -> None:
    guard = NetworkGuard(allowed=["10.0.0.0/8"])
    assert guard.permits("10.9.9.9")
    assert not guard.permits("192.168.1.1")
    assert NetworkGuard(allow_private=True).permits("192.168.1.1")


def test_a_socket_is_made_only_for_a_permitted_address() -> None:
    """The connector's socket factory sees the address actually connected to."""
    tcp = (socket.SOCK_STREAM, socket.IPPROTO_TCP, "")
    with pytest.raises(PrivateNetworkError, match="refused network"):
        NetworkGuard().socket((socket.AF_INET6, *tcp, ("::1", 80, 0, 0)))
    with pytest.raises(PrivateNetworkError, match="refused network"):
        NetworkGuard().socket((socket.AF_INET, *tcp, ("169.254.169.254", 80)))
    with pytest.raises(PrivateNetworkError, match="refused network"):
        NetworkGuard().socket((socket.AF_INET6, *tcp, ("64:ff9b::a9fe:a9fe", 80, 0, 0)))
    with NetworkGuard().socket((socket.AF_INET, *tcp, ("93.184.216.34", 80))) as made:
        assert made.family == socket.AF_INET


class FixedResolver(AbstractResolver):
    def __init__(self, *addresses: str) -> None:
        self.addresses = addresses

    async def resolve(self, host: str, port: int = 0, family: int = 0) -> list[ResolveResult]:
        return [
            ResolveResult(hostname=host, host=a, port=port, family=2, proto=0, flags=0)
            for a in self.addresses
        ]

    async def close(self) -> None:
        pass


async def test_resolver_drops_refused_answers_and_fails_when_none_remain() -> None:
    mixed = GuardedResolver(NetworkGuard(), FixedResolver("10.0.0.1", "93.184.216.34"))
    assert [r["host"] for r in await mixed.resolve("example.com", 80)] == ["93.184.216.34"]
    private = GuardedResolver(NetworkGuard(), FixedResolver("127.0.0.1", "64:ff9b::7f00:1"))
    with pytest.raises(PrivateNetworkError, match="resolves only to refused"):
        await private.resolve("rebind.example", 80)


async def test_a_redirect_to_an_ipv6_host_that_carries_a_refused_ipv4_is_refused(
    db_url: str,
) -> None:
    hops = {path: redirect(f"http://[{host}]/latest/meta-data/") for path, host in CARRIERS.items()}
    app = site({"/": html(links(*CARRIERS)), **hops})
    async with serving(app) as base:
        summary = await crawl(
            db_url,
            [base],
            allow_private_networks=False,
            allowed_networks=("127.0.0.1/32",),
            # in scope, so the network guard is what refuses them
            allowed_domains=("127.0.0.1", *CARRIERS.values()),
        )
    assert summary.stop_reason == "frontier exhausted"
    pages = await collection(db_url)
    assert {path: pages[base + path[1:]].error for path in CARRIERS} == dict.fromkeys(
        CARRIERS, "private_network"
    )
    assert sorted(app[SEEN].paths()) == sorted(["/robots.txt", "/", *CARRIERS])
