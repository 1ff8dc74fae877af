"""Network for sandboxed runs: off, or a filtering proxy and loopback ports let through.

Every run gets its own network namespace (bubblewrap's `--unshare-net`): nothing it opens
reaches this machine or the internet. Two settings open doors, each on purpose narrow:

- `network.allowedDomains`: HTTP(S) to those hosts only, through a proxy agentls runs on
  127.0.0.1 — `pproxy` (an asyncio HTTP proxy; no HTTP parsing of ours), with a filter
  that refuses every other host, for plain requests and `CONNECT` tunnels alike. One proxy
  per distinct allowlist, for the life of the server.
- `allowLocalBinding`: the services listening on this machine's loopback when the run
  starts (a dev database, a local API) are reachable at the same `127.0.0.1` ports.

The sandbox cannot reach the host's loopback, so each door is a Unix socket in a per-run
folder bound into the sandbox, bridged here to the proxy or the port; inside, a small
forwarder (`_forwarder.py`) listens on loopback ports and passes bytes along.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from agentls.sandbox.settings import SandboxNetwork

__all__ = ["FORWARDER", "NetworkPlan", "ProxyPool", "loopback_listeners", "open_network"]

log = logging.getLogger(__name__)

FORWARDER = Path(__file__).with_name("_forwarder.py")
INSIDE = "/run/agentls-net"
"""Where the per-run socket folder appears inside the sandbox."""
_LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
_MAX_PORTS = 256
_CHUNK = 64 * 1024


class ProxyPool:
    """Filtering proxies on 127.0.0.1, one per allowlist, started on first use."""

    def __init__(self) -> None:
        self._servers: dict[tuple[str, ...], asyncio.Server] = {}
        self._lock = asyncio.Lock()

    async def port(self, network: SandboxNetwork) -> int:
        key = tuple(sorted(network.allowed_domains))
        async with self._lock:
            server = self._servers.get(key)
            if server is None:
                server = await _start_proxy(network)
                self._servers[key] = server
        return int(server.sockets[0].getsockname()[1])

    def close(self) -> None:
        for server in self._servers.values():
            try:
                server.close()
            except RuntimeError:  # its event loop is already closed
                log.debug("sandbox proxy closed with its loop")
        self._servers.clear()


async def _start_proxy(network: SandboxNetwork) -> asyncio.Server:
    import pproxy  # type: ignore[import-untyped]

    def refused(host: str) -> bool:
        blocked = not network.allows_host(host)
        if blocked:
            log.info("sandbox proxy refused %s (not in sandbox.network.allowedDomains)", host)
        return blocked

    listener = pproxy.Server("http://127.0.0.1:0")
    options: dict[str, object] = {
        "rserver": [],
        "block": refused,
        "httpget": {},
        "verbose": lambda message: log.debug("sandbox proxy: %s", message),
    }
    server: asyncio.Server = await listener.start_server(options)
    return server


@dataclass
class NetworkPlan:
    """What a run's network needs inside the sandbox (None folder: fully off)."""

    folder: Path | None = None
    no_proxy: str = ""


def loopback_listeners(exclude: set[int] | None = None) -> list[int]:
    """TCP ports listening on this machine's loopback (or on all addresses) right now."""
    import psutil

    ports: set[int] = set()
    try:
        connections = psutil.net_connections(kind="tcp")
    except (psutil.Error, OSError) as exc:
        log.warning("cannot list listening ports for allowLocalBinding: %s", exc)
        return []
    for conn in connections:
        if conn.status != psutil.CONN_LISTEN or not conn.laddr:
            continue
        if conn.laddr.ip in ("127.0.0.1", "::1", "0.0.0.0", "::"):
            ports.add(conn.laddr.port)
    return sorted(ports - (exclude or set()))[:_MAX_PORTS]


@contextlib.asynccontextmanager
async def open_network(network: SandboxNetwork, proxies: ProxyPool) -> AsyncIterator[NetworkPlan]:
    """The doors for one run (none when the network is off), closed afterwards."""
    if not network.allowed_domains and not network.allow_local_binding:
        yield NetworkPlan()
        return
    folder = Path(tempfile.mkdtemp(prefix="agentls-net-"))
    servers: list[asyncio.Server] = []
    try:
        shutil.copyfile(FORWARDER, folder / FORWARDER.name)
        proxy_ports: set[int] = set()
        if network.allowed_domains:
            port = await proxies.port(network)
            proxy_ports.add(port)
            servers.append(await _bridge(folder / "proxy.sock", port))
        if network.allow_local_binding:
            for port in loopback_listeners(exclude=proxy_ports):
                servers.append(await _bridge(folder / f"port-{port}.sock", port))
        allowed = {d.lower() for d in network.allowed_domains}
        no_proxy = ",".join(n for n in _LOOPBACK_NAMES if n not in allowed)
        yield NetworkPlan(folder, no_proxy)
    finally:
        for server in servers:
            server.close()
        shutil.rmtree(folder, ignore_errors=True)


async def _bridge(path: Path, port: int) -> asyncio.Server:
    """A Unix socket whose connections are passed on to 127.0.0.1:`port`."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            writer.close()
            return
        try:
            await asyncio.gather(_copy(reader, up_writer), _copy(up_reader, writer))
        finally:
            for end in (writer, up_writer):
                end.close()

    return await asyncio.start_unix_server(handle, path=str(path))


async def _copy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(_CHUNK):
            writer.write(data)
            await writer.drain()
    except (OSError, asyncio.IncompleteReadError):
        pass
    finally:
        with contextlib.suppress(OSError, RuntimeError):
            if writer.can_write_eof():
                writer.write_eof()
            else:
                writer.close()
