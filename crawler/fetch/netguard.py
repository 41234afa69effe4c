"""Refuse connections to private, loopback, link-local and other special networks.

The check is in the socket factory the connector opens every connection with, so it is
made on the address actually connected to: for pages, robots.txt and every redirect hop,
for names and IP literals alike (aiohttp skips its resolver for the latter). The
resolver also leaves refused answers out, so a name with a refused and a permitted
address connects to the permitted one, and a name with only refused ones fails at once
with a clear error.

An IPv6 address can carry an IPv4 one to a network that delivers to it (NAT64, 6to4,
Teredo) or be another spelling of it (IPv4-mapped, -translated, -compatible): the IPv4
addresses it carries are judged as the guard judges IPv4, so that IPv6 opens no network
the guard refuses.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable

from aiohappyeyeballs import AddrInfoType
from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import DefaultResolver

from crawler.errors import PrivateNetworkError

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# the IPv4 address in the last 32 bits: NAT64's well-known and local-use prefixes
# (RFC 6052, RFC 8215; the latter as a /96), IPv4-compatible and -translated (RFC 2765)
LAST_32_BITS_CARRIERS = tuple(
    ipaddress.IPv6Network(cidr)
    for cidr in ("64:ff9b::/96", "64:ff9b:1::/48", "::/96", "::ffff:0:0:0/96")
)
# IPv6's own loopback and unspecified address are in ::/96, and carry nothing
NOT_CARRIERS = frozenset({ipaddress.IPv6Address("::"), ipaddress.IPv6Address("::1")})
# not global (RFC 8215), though older Pythons count it so
LOCAL_USE_NAT64 = ipaddress.IPv6Network("64:ff9b:1::/48")


def carried_ipv4(ip: ipaddress.IPv6Address) -> tuple[ipaddress.IPv4Address, ...]:
    """The IPv4 addresses `ip` carries (a Teredo address carries its server's and its
    client's), none for a plain IPv6 address."""
    if ip in NOT_CARRIERS:
        return ()
    if any(ip in network for network in LAST_32_BITS_CARRIERS):
        return (ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF),)
    if ip.sixtofour is not None:
        return (ip.sixtofour,)
    if ip.teredo is not None:
        return ip.teredo
    return ()


class NetworkGuard:
    """Which addresses may be connected to: public ones, plus the networks allowed."""

    def __init__(self, *, allow_private: bool = False, allowed: Iterable[str] = ()) -> None:
        self.allow_private = allow_private
        self.allowed: tuple[IPNetwork, ...] = tuple(
            ipaddress.ip_network(cidr, strict=False) for cidr in allowed
        )

    def permits(self, address: str) -> bool:
        try:
            ip = ipaddress.ip_address(address.split("%", 1)[0])
        except ValueError:
            return False
        if isinstance(ip, ipaddress.IPv6Address):
            if ip.ipv4_mapped is not None:  # the IPv4 address itself, to the socket
                return self._permits_alone(ip.ipv4_mapped)
            carried = carried_ipv4(ip)
            return self._permits_alone(ip) and all(map(self._permits_alone, carried))
        return self._permits_alone(ip)

    def _permits_alone(self, ip: IPAddress) -> bool:
        """Whether `ip` is permitted, judged on its own."""
        if any(ip in network for network in self.allowed):
            return True
        if self.allow_private:
            return not (ip.is_multicast or ip.is_unspecified)
        return ip.is_global and ip not in LOCAL_USE_NAT64

    def socket(self, addr_info: AddrInfoType) -> socket.socket:
        """A socket for a connection to `addr_info`'s address, if the address is permitted
        (aiohttp's `socket_factory`)."""
        family, type_, proto, _, address = addr_info
        if not self.permits(str(address[0])):
            raise PrivateNetworkError(f"address {address[0]} is in a refused network")
        return socket.socket(family=family, type=type_, proto=proto)


class GuardedResolver(AbstractResolver):
    """aiohttp's resolver, with the answers the guard refuses taken out."""

    def __init__(self, guard: NetworkGuard, resolver: AbstractResolver | None = None) -> None:
        self._guard = guard
        self._resolver = resolver or DefaultResolver()

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        answers = await self._resolver.resolve(host, port, family)
        permitted = [a for a in answers if self._guard.permits(a["host"])]
        if not permitted:
            raise PrivateNetworkError(f"{host} resolves only to refused addresses")
        return permitted

    async def close(self) -> None:
        await self._resolver.close()
