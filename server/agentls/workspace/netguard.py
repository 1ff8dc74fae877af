"""The private-address guard and a client that connects only through it: `web_fetch` and
`http` hooks (`agentls.agent.hooks.http`) reach the network this way.

The guard runs at connection time: the network backend resolves the host itself and
connects only to addresses it checked, so a name that resolves differently the second
time (DNS rebinding), or a redirect, cannot reach a loopback, link-local or private
address no setting allows. Kept below `agent` and `tools` (both use it) and imported only
when a request is made (the HTTP stack is not loaded at start-up).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import ssl
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import httpcore2
import httpx2

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


class BlockedAddress(httpcore2.ConnectError):
    """A connection to a private, loopback or link-local address that no setting allows."""


def _plain(address: IPAddress) -> IPAddress:
    """The IPv4 address behind an IPv4-mapped, 6to4 or Teredo IPv6 address."""
    if isinstance(address, ipaddress.IPv6Address):
        for inner in (address.ipv4_mapped, address.sixtofour):
            if inner is not None:
                return inner
        if address.teredo is not None:
            return address.teredo[1]
    return address


def address_kind(address: IPAddress) -> str | None:
    """Why an address is not a public one ("loopback", "private", …), or None."""
    plain = _plain(address)
    for kind, flag in (
        ("loopback", plain.is_loopback),
        ("link-local", plain.is_link_local),
        ("unspecified", plain.is_unspecified),
        ("multicast", plain.is_multicast),
        ("private", plain.is_private),
        ("reserved", plain.is_reserved),
    ):
        if flag:
            return kind
    return None if plain.is_global else "non-public"


@dataclass(frozen=True)
class AddressGuard:
    """Refuses non-public addresses except those in `allowed` (the
    `webFetch.allowedPrivateAddresses` setting)."""

    allowed: tuple[IPNetwork, ...] = ()
    who: str = "web_fetch"
    """What is refused, in the message (`web_fetch`, an http hook)."""

    @classmethod
    def of(cls, networks: Iterable[str], *, who: str = "web_fetch") -> AddressGuard:
        return cls(tuple(ipaddress.ip_network(n.strip(), strict=False) for n in networks), who)

    def problem(self, host: str, address: IPAddress) -> str | None:
        """Why connecting to `address` (for `host`) is refused, or None."""
        kind = address_kind(address)
        if kind is None or any(address in net or _plain(address) in net for net in self.allowed):
            return None
        via = "" if host == str(address) else f"{host} resolves to "
        return (
            f"{via}{address}, a {kind} address; {self.who} does not reach loopback, link-local "
            "or private networks unless the user allows that address in the setting "
            "`webFetch.allowedPrivateAddresses`"
        )

    async def resolve(self, host: str, port: int) -> list[str]:
        """The host's addresses, all checked; `BlockedAddress` if any is refused."""
        literal = _literal(host)
        if literal is not None:
            addresses: list[IPAddress] = [literal]
        else:
            loop = asyncio.get_running_loop()
            try:
                infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            except socket.gaierror as exc:
                raise httpcore2.ConnectError(f"cannot resolve {host}: {exc}") from None
            addresses = [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos]
        for address in addresses:
            problem = self.problem(host, address)
            if problem is not None:
                raise BlockedAddress(problem)
        return list(dict.fromkeys(str(a) for a in addresses))


def _literal(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


class GuardedBackend(httpcore2.AsyncNetworkBackend):
    """Connects only to addresses the guard checked at connection time (no DNS rebinding,
    no redirect into a private network); never to Unix sockets."""

    def __init__(self, guard: AddressGuard) -> None:
        self.guard = guard
        self.inner = httpcore2.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's interface
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        last: Exception | None = None
        for address in await self.guard.resolve(host, port):
            try:
                return await self.inner.connect_tcp(
                    address, port, timeout, local_address, socket_options
                )
            except httpcore2.ConnectError as exc:
                last = exc
        raise last or httpcore2.ConnectError(f"no address to connect to for {host}")

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's interface
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        raise BlockedAddress("web_fetch does not connect to Unix sockets")

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


def guarded_transport_client(
    guard: AddressGuard, timeout: float, headers: Mapping[str, str] | None = None
) -> httpx2.AsyncClient:
    """An HTTP client whose every connection goes through the guard. It ignores proxy
    variables (a proxy would connect on our behalf, past the guard) and follows no
    redirect itself."""
    transport = httpx2.AsyncHTTPTransport(trust_env=False, retries=0)
    context: ssl.SSLContext = httpx2.create_ssl_context(trust_env=False)
    # httpx has no public hook for the network backend: give its transport a pool that
    # uses ours (the pool is what `AsyncHTTPTransport` sends every request through).
    transport._pool = httpcore2.AsyncConnectionPool(
        ssl_context=context, network_backend=GuardedBackend(guard)
    )
    return httpx2.AsyncClient(
        transport=transport,
        timeout=httpx2.Timeout(timeout),
        follow_redirects=False,
        trust_env=False,
        headers=dict(headers or {}),
    )
