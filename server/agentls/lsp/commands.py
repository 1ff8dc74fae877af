"""`workspace/executeCommand` handlers: validate one argument object, call the host.

Each command takes exactly one JSON object, validated with pydantic (`arguments`) so a
bad call gets a JSON-RPC InvalidParams error naming the field and the problem, and the
server stays up.
Long work never happens inside a request: `agentls.run` returns `{session}` at once unless
the caller asks to `wait`.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from agentls.errors import SessionBusy
from agentls.lsp.contract import Connection

log = logging.getLogger(__name__)

Handler = Callable[["Connection", Any], Awaitable[Any]]

REQUEST_FAILED = -32803
"""LSP `RequestFailed`: the request was valid but could not be done now (a busy session)."""


class SessionBusyError(JsonRpcException):
    """The session named is running (or compacting); the message says to cancel or wait."""

    CODE = REQUEST_FAILED


COMMANDS: dict[str, tuple[str, str]] = {
    "agentls.run": ("RunArgs", "run"),
    "agentls.ask": ("RunArgs", "ask"),
    "agentls.cancel": ("CancelArgs", "cancel"),
    "agentls.accept": ("EditArgs", "accept"),
    "agentls.reject": ("EditArgs", "reject"),
    "agentls.tool": ("ToolArgs", "tool"),
    "agentls.tools": ("ToolsArgs", "tools"),
    "agentls.status": ("StatusArgs", "status"),
    "agentls.compact": ("CompactArgs", "compact"),
    "agentls.sessions": ("StatusArgs", "sessions"),
    "agentls.staged": ("StagedArgs", "staged"),
    "agentls.toolResult": ("ToolResultArgs", "tool_result"),
    "agentls.trust": ("TrustArgs", "trust"),
    "agentls.mcp": ("agentls.lsp.mcp_command:McpArgs", "agentls.lsp.mcp_command:mcp"),
    "agentls.commands": ("StatusArgs", "commands"),  # custom commands (/name), issue 15
    "agentls.rewind": ("RewindArgs", "agentls.lsp.rewind:rewind"),  # issue 30
}
"""Command name → (argument model in `arguments`, function in `actions`); a
`module:name` pair names them in a command module of their own."""


FLUSH_NOTIFICATION = "$/agentls/flush"
"""Sent by the Neovim client (0.7-0.9) only to make Neovim send its pending didChange
notifications first (it flushes them before any other message); nothing to do here."""


def setup(server: Connection) -> None:
    """Register every command; models and actions are imported on the first call."""
    for name, (model, action) in COMMANDS.items():
        _register(server, name, model, action)

    @server.feature(FLUSH_NOTIFICATION)
    def flushed(ls: Connection, params: Any) -> None:
        del ls, params


def _resolve(default: Any, name: str) -> Any:
    """`name` in the default module, or `module:name` anywhere."""
    if ":" not in name:
        return getattr(default, name)
    module, _, attribute = name.partition(":")
    return getattr(importlib.import_module(module), attribute)


def _register(server: Connection, name: str, model_name: str, action: str) -> None:
    async def command(ls: Connection, *args: Any) -> Any:
        await ls.wait_ready()  # before importing: `initialized` preloads these off the loop
        from agentls.lsp import actions, arguments

        parsed = arguments.parse_args(name, _resolve(arguments, model_name), args)
        handler: Handler = _resolve(actions, action)
        try:
            return await handler(ls, parsed)
        except asyncio.CancelledError:
            raise
        except JsonRpcInvalidParams:
            raise
        except SessionBusy as exc:
            raise SessionBusyError(f"{name}: {exc}", REQUEST_FAILED) from None
        except LookupError as exc:  # unknown session and friends
            raise JsonRpcInvalidParams(f"{name}: {exc.args[0] if exc.args else exc}") from None
        except ValueError as exc:
            raise JsonRpcInvalidParams(f"{name}: {exc}") from None

    command.__name__ = name.replace(".", "_")
    server.command(name)(command)
