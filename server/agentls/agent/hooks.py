"""Pre- and post-tool hooks, as a runner object the host supplies (default: no hooks).

A pre-hook may block a call or rewrite its input; a post-hook may block (replace the
result with an error the model sees) or append context. The safety work fills this in
with user-configured hook commands.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from agentls.agent.context import ToolContext
    from agentls.agent.tool import ToolOutput


@dataclass(frozen=True)
class HookOutcome:
    block: bool = False
    message: str = ""
    updated_input: dict[str, Any] | None = None
    additional_context: str = ""


class HookRunner(Protocol):
    async def pre_tool(
        self, tool_name: str, input: dict[str, Any], ctx: ToolContext
    ) -> HookOutcome: ...

    async def post_tool(
        self, tool_name: str, input: dict[str, Any], output: ToolOutput, ctx: ToolContext
    ) -> HookOutcome: ...


class NoHooks:
    async def pre_tool(
        self, tool_name: str, input: dict[str, Any], ctx: ToolContext
    ) -> HookOutcome:
        return HookOutcome()

    async def post_tool(
        self, tool_name: str, input: dict[str, Any], output: ToolOutput, ctx: ToolContext
    ) -> HookOutcome:
        return HookOutcome()
