"""When tools are deferred behind a search, and how the model finds them (docs/mcp.md)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from agentls.config.base import SettingsModel


class ToolSearchSettings(SettingsModel):
    """When tools are deferred and how the model finds them.

    `mode`: `auto` defers `defer_when_large` tools (MCP tools) once there are more than
    `max_tools` of them or their definitions come to more than `max_schema_chars`
    characters (the built-in tools are not counted: they are always sent); `always`
    defers them regardless; `never` sends every tool (even `should_defer` ones) and offers
    no search. `server_side`: send deferred tools with `defer_loading: true` plus
    Anthropic's own tool search tool instead of our client-side `tool_search` (only for
    endpoints that support it).
    """

    mode: Literal["auto", "always", "never"] = "auto"
    """`auto`: defer MCP tools once the pool is large; `always`; `never`."""
    max_tools: int = Field(default=30, ge=0)
    """`auto` defers the MCP tools when there are more of them than this."""
    max_schema_chars: int = Field(default=40_000, ge=0)
    """… or their definitions have more characters than this."""
    server_side: bool = False
    """Use Anthropic's server-side tool search instead of our `tool_search` tool."""
    server_side_variant: Literal["bm25", "regex"] = "bm25"
    """Which server-side search tool."""
    max_results: int = Field(default=5, ge=0)
    """Tools one keyword search loads at most."""
