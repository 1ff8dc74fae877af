"""The permission step of the pipeline, as a policy object the host supplies.

The core only knows the interface; the safety work (modes, allow/ask/deny rules, the
editor's approval prompt) plugs in as a `PermissionPolicy` (see `agentls.agent.policy`).
The default allows all, which is what a test host or a fully trusted script wants.

An `Approver` is the one thing an editor must provide for "ask" decisions: it shows the
request and returns the user's choice. Keeping it this small lets every host (LSP prompt,
CLI, tests) share one rule engine and one "allow for this session" memory.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from agentls.agent.tool import PermissionDecision
from agentls.config.base import PERMISSION_MODES as PERMISSION_MODES
from agentls.config.base import PermissionMode as PermissionMode

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


ApprovalChoice = Literal["allow_once", "allow_session", "deny"]


@dataclass(frozen=True)
class ApprovalRequest:
    """What the user is asked about: enough to decide without reading the raw input.

    `remember` lists what "allow for this session" would remember (e.g.
    `["run_command(npm test)"]`); it is empty when the call can only be allowed once
    (an `ask` rule matched, or the tool always asks), so the host can hide that choice.
    """

    session_id: str
    tool: str
    summary: str
    reason: str
    input: dict[str, Any] = field(default_factory=dict)
    remember: tuple[str, ...] = ()
    tool_use_id: str = ""

    @property
    def can_remember(self) -> bool:
        return bool(self.remember)


class Approver(Protocol):
    """Asks the user about one call. Must not raise for a dismissed prompt: return "deny"."""

    async def ask(self, request: ApprovalRequest) -> ApprovalChoice: ...
