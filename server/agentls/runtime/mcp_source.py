"""The workspace's MCP servers as a tool source, created on first need.

Importing the MCP SDK takes seconds, so neither start-up nor the event loop pays for it:
the manager is built in a thread when a session first asks for tools (or at once with
`mcp.startup: "eager"`). Its notices and the servers' questions go through the host's
ports; changed `mcp` settings are applied before the next session loads its tools.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from agentls.agent.framework.registry import AnyTool
    from agentls.agent.safety import Safety
    from agentls.config import McpSettings
    from agentls.mcp import McpManager
    from agentls.runtime.config_state import ConfigState
    from agentls.runtime.ports import HostPorts
    from agentls.workspace import Workspace


class Runtime(Protocol):
    """What the MCP source reads of its runtime (`runtime.AgentRuntime` is one)."""

    config: ConfigState
    workspace: Workspace
    ports: HostPorts
    safety: Safety | None


class McpSource:
    """The MCP servers of one runtime's workspace (settings, approved `.mcp.json`, the
    user's file), shared by its sessions; closed with the host."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.manager: McpManager | None = None
        self._settings: McpSettings | None = None
        self._building: asyncio.Lock | None = None
        self._eager: asyncio.Task[None] | None = None

    def _build(self) -> McpManager:
        from agentls.mcp import HostBridge, McpManager

        runtime = self.runtime
        ports = runtime.ports
        current = runtime.config.current
        self._settings = current.mcp
        bridge = HostBridge(roots=lambda: runtime.workspace.roots, questions=ports.mcp_questions())
        safety = runtime.safety
        return McpManager.from_config(
            runtime.workspace.roots[0],
            self._settings,
            approve_project_file=ports.approve_mcp_project_file,
            read_claude_settings=current.read_claude_settings,
            bridge=bridge,
            notify=ports.mcp_notice,
            extra_env=safety.env if safety is not None else None,
        )

    async def ensure(self) -> McpManager:
        """The manager, built now if needed, with the current `mcp` settings applied."""
        if self._building is None:
            self._building = asyncio.Lock()
        async with self._building:
            current = self.runtime.config.current.mcp
            if self.manager is None:
                self.manager = await asyncio.to_thread(self._build)
            elif self._settings != current:
                self._settings = current
                await self.manager.reload(current)
        return self.manager

    async def tools(self) -> Sequence[AnyTool]:
        manager = await self.ensure()
        return await manager.tools()

    def instructions_for(self, tools: Sequence[AnyTool]) -> str:
        return self.manager.instructions_for(tools) if self.manager is not None else ""

    def start_soon(self) -> None:
        """With `mcp.startup: "eager"`: build the manager and start the servers now."""
        if self.runtime.config.current.mcp.startup != "eager":
            return

        async def start() -> None:
            manager = await self.ensure()
            await manager.start()

        self._eager = asyncio.get_running_loop().create_task(start(), name="agentls-mcp-eager")

    def status(self) -> list[dict[str, object]]:
        return self.manager.status() if self.manager is not None else []

    async def aclose(self) -> None:
        if self.manager is not None:
            await self.manager.aclose()
