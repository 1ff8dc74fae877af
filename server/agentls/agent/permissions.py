"""The permission step of the pipeline, as a policy object the host supplies.

The core only knows the interface; the safety work (modes, allow/ask/deny rules, the
editor's approval prompt) plugs in as a `PermissionPolicy`. The default allows all, which
is what a test host or a fully trusted script wants.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from agentls.agent.tool import PermissionDecision

if TYPE_CHECKING:
    from agentls.agent.context import ToolContext
    from agentls.agent.tool import Tool


class PermissionPolicy(Protocol):
    async def decide(
        self,
        tool: Tool[Any],
        input: Any,
        tool_opinion: PermissionDecision,
        ctx: ToolContext,
    ) -> PermissionDecision:
        """Final allow/deny for one call, given the tool's own `check_permissions` result.

        An `ask` opinion must be resolved here (e.g. by asking the user); returning `ask`
        is treated as deny, so a host without an approver fails closed.
        """
        ...


class AllowAll:
    """Allows everything the tool itself does not deny."""

    async def decide(
        self,
        tool: Tool[Any],
        input: Any,
        tool_opinion: PermissionDecision,
        ctx: ToolContext,
    ) -> PermissionDecision:
        if tool_opinion.behavior == "deny":
            return tool_opinion
        return PermissionDecision.allow()
