"""The MCP SDK parts agentls builds on, checked by name and signature.

`agentls.mcp.sdk` is the one module that knows how the SDK's client is assembled; when an
SDK upgrade moves or changes one of these parts, this test says which, before any server
test fails in a harder-to-read way.
"""

from __future__ import annotations

import dataclasses
import inspect
from importlib import metadata

import mcp
import mcp.client

from agentls.mcp import sdk

EXPECTED_VERSION = "2."


def _parameters(function: object) -> set[str]:
    return set(inspect.signature(function).parameters)  # type: ignore[arg-type]


def test_the_sdk_is_the_major_version_we_pinned() -> None:
    assert metadata.version("mcp").startswith(EXPECTED_VERSION)


def test_the_adapter_uses_only_public_sdk_modules() -> None:
    source = inspect.getsource(sdk)
    imports = [line for line in source.splitlines() if line.startswith(("from mcp", "import mcp"))]
    assert imports
    for line in imports:
        module = line.split()[1]
        assert not any(part.startswith("_") for part in module.split(".")), line
    # the transport protocol is public now (agentls once imported mcp.client._transport)
    assert mcp.client.Transport is sdk.Transport


def test_client_takes_the_callbacks_and_options_we_pass() -> None:
    fields = {f.name for f in dataclasses.fields(mcp.Client)}
    assert {
        "client_info",
        "cache",
        "list_roots_callback",
        "elicitation_callback",
    } <= fields
    assert {"read_timeout_seconds", "progress_callback"} <= _parameters(mcp.Client.call_tool)
    for prop in ("server_capabilities", "instructions", "server_info"):
        assert isinstance(inspect.getattr_static(mcp.Client, prop), property), prop


def test_transports_and_oauth_take_what_we_pass() -> None:
    from mcp.client.sse import sse_client
    from mcp.client.stdio import stdio_client
    from mcp.client.streamable_http import streamable_http_client

    assert {"errlog"} <= _parameters(stdio_client)
    assert {"headers", "auth"} <= _parameters(sse_client)
    assert {"http_client"} <= _parameters(streamable_http_client)
    assert {
        "server_url",
        "client_metadata",
        "storage",
        "redirect_handler",
        "callback_handler",
    } <= _parameters(sdk.OAuthClientProvider.__init__)
    storage = {name for name, _ in inspect.getmembers(sdk.TokenStorage, inspect.isfunction)}
    assert {"get_tokens", "set_tokens", "get_client_info", "set_client_info"} <= storage
