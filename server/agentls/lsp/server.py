"""The server's assembly: every feature module registered on a fresh connection.

The handlers live in their own modules, each with a `setup(server)` function, and know
only `agentls.lsp.contract.Connection` (what they use of a connection), never this module
nor the concrete `agentls.lsp.connection.AgentLanguageServer`; this is the one place that
builds that class and registers the features on it, so the package's modules import each
other without cycles and the handlers stay thin adapters between the protocol and the
runtime (tests/test_lsp_layering.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentls.lsp.connection import AgentLanguageServer

if TYPE_CHECKING:
    from agentls.lsp.contract import Connection


def create_server() -> AgentLanguageServer:
    """A fresh server with every feature registered."""
    from agentls.lsp import code_actions, commands, lifecycle, symbols, sync, watch

    server = AgentLanguageServer()
    connection: Connection = server  # mypy: the concrete server is what handlers expect
    for feature in (lifecycle, sync, watch, commands, code_actions, symbols):
        feature.setup(connection)
    return server
