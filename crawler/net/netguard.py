"""Refuse connections to private, loopback, link-local and other special networks.

The check is in the socket factory the connector opens every connection with, so it is
made on the address actually connected to: for pages, robots.txt and every redirect hop,
for names and IP literals alike (aiohttp skips its resolver for the latter). The
resolver also leaves refused answers out, so a name with a refused and a permitted
address connects to the permitted one, and a name with only refused ones fails at once
with a clear error.
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
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        if any(ip in network for network in self.allowed):
            return True
        if self.allow_private:
            return not (ip.is_multicast or ip.is_unspecified)
        return ip.is_global

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
