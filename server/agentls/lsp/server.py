"""The server's assembly: every feature module registered on a fresh connection.

The handlers live in their own modules, each with a `setup(server)` function, and know
only `agentls.lsp.connection.AgentLanguageServer` (the connection's state), never this
module; this is the one place that imports them and registers them, so the package's
modules import each other without cycles (tests/test_lsp_layering.py).
"""

from __future__ import annotations

from agentls.lsp.connection import AgentLanguageServer


def create_server() -> AgentLanguageServer:
    """A fresh server with every feature registered."""
    from agentls.lsp import code_actions, commands, lifecycle, symbols, sync, watch

    server = AgentLanguageServer()
    for feature in (lifecycle, sync, watch, commands, code_actions, symbols):
        feature.setup(server)
    return server
