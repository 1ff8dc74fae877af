"""`agentls doctor`'s MCP lines: every configured server, started and reported.

The servers are the runtime's (`AgentRuntime.mcp`, the source a session loads its MCP tools
from): the user file, Claude Code's local and — with the setting — user scope, the
workspace's `.mcp.json`, with the settings a session would have (the editor's are not known
to the doctor). Unapproved `.mcp.json` servers are not started; their line says how to
approve them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from agentls.runtime.mcp_source import McpSource

Status = Literal["ok", "warn", "fail", "info"]
Row = tuple[str, Status, str]


async def mcp_checks(source: McpSource) -> list[Row]:
    """Start the runtime's MCP servers (each within `mcp.startupTimeoutSeconds`), report
    them, and close them again."""
    manager = await source.ensure()
    try:
        await manager.start()
        entries = manager.status()
        ignored = list(manager.switches.ignored)
    finally:
        await source.aclose()
    if not entries:
        return [
            (
                "servers",
                "info",
                "none configured (~/.config/agentls/mcp.json, the workspace's .mcp.json, "
                "Claude Code's `claude mcp add` servers, or `mcp.mcpServers` in the editor)",
            )
        ]
    rows = [_row(entry) for entry in entries]
    rows += [("approvals", "warn", note) for note in ignored]
    return rows


def _row(entry: dict[str, object]) -> Row:
    name = str(entry.get("name"))
    where = f"{entry.get('source')}: {entry.get('target', '')}".rstrip(": ")
    state = entry.get("state")
    error = str(entry.get("error") or "")
    if state == "ready":
        detail = f"ready in {entry.get('startup_ms', '?')} ms, {entry.get('tools', 0)} tools"
        return name, "ok", f"{detail} ({where})"
    if state == "disabled":
        return name, "info", f"disabled ({where}): {error}"
    if state == "invalid-config":
        return f"config {name}" if name != "*" else "config", "warn", error
    return name, "warn", f"{state} ({where}): {error}"
