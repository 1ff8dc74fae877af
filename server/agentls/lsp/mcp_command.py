"""`agentls.mcp {action, server?}`: the MCP servers of a long-lived editor session.

- `status`: every server (state, source, tools, errors; those awaiting approval with the
  reason), the workspace's `.mcp.json` and the standing approvals;
- `approve`: approve the workspace's `.mcp.json` (remembered for its current content), or
  with `server` one of its servers; what that approves starts at once;
- `restart`: with `server`, start that server again (after a crash, a failed start or a
  changed command); without, read the configuration again and restart every server.

Each returns the `status` report after the action. New sessions get the servers' tools; a
running session keeps its tool set, and its calls of a restarted server's tools reach the
new process. Only the user's editor sends commands: a repository cannot approve with them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field

from agentls.lsp.arguments import _Args

if TYPE_CHECKING:
    from agentls.lsp.contract import Connection


class McpArgs(_Args):
    action: Literal["status", "approve", "restart"]
    server: str | None = Field(default=None, min_length=1)


async def mcp(ls: Connection, args: McpArgs) -> dict[str, object]:
    from agentls.lsp.safety import mcp_source

    source = mcp_source(ls)
    if source is None:
        raise LookupError("this server has no MCP servers configured")
    manager = await source.ensure()
    if args.action == "approve":
        approved = await manager.approve(args.server)
        ls.log_line(f"agentls: MCP servers approved: {', '.join(approved)}")
    elif args.action == "restart":
        await manager.restart(args.server)
    report = manager.report()
    report["action"] = args.action
    return report
