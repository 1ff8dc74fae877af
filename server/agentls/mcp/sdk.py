"""The one place that knows how the MCP SDK's client is put together.

Everything else in `agentls.mcp` imports the SDK's client-side parts from here, so an SDK
upgrade that moves or renames them breaks this module alone, and
`tests/test_mcp_sdk_adapter.py` says exactly what changed. Only public names are used
(`mcp`, `mcp.client`, `mcp.client.*` modules, `mcp.client.auth`, `mcp.shared.exceptions`):
the transports' stream type is private in the SDK, so a transport is typed here as the
public `mcp.client.Transport` protocol.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from typing import IO, Any, TextIO, cast

import httpx2
from mcp import Client, StdioServerParameters
from mcp.client import ClientRequestContext, Transport
from mcp.client.auth import OAuthClientProvider, OAuthFlowError, TokenStorage
from mcp.client.sse import sse_client
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)
from mcp.shared.exceptions import MCPError

__all__ = [
    "HTTP_TIMEOUT",
    "SSE_READ_TIMEOUT",
    "AuthorizationCodeResult",
    "Client",
    "ClientRequestContext",
    "MCPError",
    "OAuthClientInformationFull",
    "OAuthClientMetadata",
    "OAuthClientProvider",
    "OAuthFlowError",
    "OAuthToken",
    "TokenStorage",
    "Transport",
    "http_transport",
    "sse_transport",
    "stdio_transport",
]

HTTP_TIMEOUT = 30.0
"""Connect/write/pool timeout of remote servers' HTTP requests (the SDK's default)."""
SSE_READ_TIMEOUT = 300.0
"""How long a remote server may keep a response stream silent (the SDK's default)."""


def stdio_transport(
    command: str, args: list[str], env: Mapping[str, str], cwd: str | None, errlog: IO[str]
) -> Transport:
    """A stdio server: the SDK starts the process and kills its process group on close."""
    params = StdioServerParameters(command=command, args=args, env=dict(env), cwd=cwd)
    return cast(Transport, stdio_client(params, errlog=cast(TextIO, errlog)))


StatusHook = Callable[[int, str], None]
"""(HTTP status, URL) of every response (the SDK keeps only "an error response")."""


def http_client(
    headers: Mapping[str, str] | None = None,
    timeout: httpx2.Timeout | None = None,
    auth: httpx2.Auth | None = None,
    on_status: StatusHook | None = None,
) -> httpx2.AsyncClient:
    """An HTTP client for a remote server: the SDK's default timeouts, redirects left to
    the SDK (same origin only), and every response's status reported to `on_status`."""

    async def report(response: httpx2.Response) -> None:
        if on_status is not None:
            on_status(response.status_code, str(response.request.url))

    return httpx2.AsyncClient(
        headers=dict(headers) if headers else None,
        timeout=timeout or httpx2.Timeout(HTTP_TIMEOUT, read=SSE_READ_TIMEOUT),
        auth=auth,
        event_hooks={"response": [report]},
    )


def sse_transport(
    url: str,
    headers: Mapping[str, str],
    auth: httpx2.Auth | None = None,
    on_status: StatusHook | None = None,
) -> Transport:
    """A legacy SSE server."""

    def factory(
        headers: dict[str, str] | None = None,
        timeout: httpx2.Timeout | None = None,
        auth: httpx2.Auth | None = None,
    ) -> httpx2.AsyncClient:
        return http_client(headers, timeout, auth, on_status)

    transport = sse_client(
        url, headers=dict(headers) or None, auth=auth, httpx_client_factory=factory
    )
    return cast(Transport, transport)


def http_transport(
    url: str,
    headers: Mapping[str, str],
    auth: httpx2.Auth | None = None,
    on_status: StatusHook | None = None,
) -> Transport:
    """A streamable-HTTP server, with its headers and (optional) OAuth on our own client."""
    return cast(Transport, _streamable_http(url, dict(headers), auth, on_status))


@asynccontextmanager
async def _streamable_http(
    url: str, headers: dict[str, str], auth: httpx2.Auth | None, on_status: StatusHook | None
) -> AsyncIterator[Any]:
    # The SDK takes headers and auth through the httpx client it is given.
    async with (
        http_client(headers, auth=auth, on_status=on_status) as http,
        streamable_http_client(url, http_client=http) as streams,
    ):
        yield streams
