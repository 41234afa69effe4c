from __future__ import annotations

import socket

import pytest
from aiohttp.abc import AbstractResolver, ResolveResult

from crawler.net.netguard import GuardedResolver, NetworkGuard, PrivateNetworkError


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


def test_public_addresses_are_permitted() -> None:
    guard = NetworkGuard()
    assert guard.permits("93.184.216.34")
    assert guard.permits("2606:4700::1111")


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
    private = GuardedResolver(NetworkGuard(), FixedResolver("127.0.0.1"))
    with pytest.raises(PrivateNetworkError, match="resolves only to refused"):
        await private.resolve("rebind.example", 80)
