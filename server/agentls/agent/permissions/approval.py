"""The permission step's types: the policy the host supplies and the "ask the user" port.

Whether a call runs is one decision, `agentls.agent.run.decision.decide`, with one answer type
(`agentls.agent.framework.requirement.Requirement`): hook denials, secret files, plan mode and the
tool's refusal are its own steps; the rest — modes, allow/ask/deny rules, "allow for this
session" — is the `PermissionPolicy`, whose one real implementation is
`agentls.agent.permissions.policy.RulePolicy`. `AllowAll` is for hosts that trust every call (tests,
scripts); it still gets the decision's own steps.

An `Approver` is the one thing a host must provide for "ask" decisions: it shows the
request and returns the user's choice. LSP: `window/showMessageRequest` (the headless CLI
answers that request on its terminal); ACP: `session/request_permission`. Keeping it this
small lets every host share one rule engine and one "allow for this session" memory.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from agentls.agent.framework.requirement import NO_RISK, CallRisk, Requirement
from agentls.agent.protocol.messages import JsonObject
from agentls.config.base import PERMISSION_MODES as PERMISSION_MODES
from agentls.config.base import PermissionMode as PermissionMode

if TYPE_CHECKING:
    from agentls.agent.framework.context import ToolContext
    from agentls.agent.framework.tool import Tool


@dataclass(frozen=True)
class PendingCall:
    """One call the permission decision is about: the tool, its parsed input, the context,
    and what others said about it — a PreToolUse hook (`hook`) and the tool itself, with
    the sandbox's answer (`risk`, from `Tool.assess`). Facts, not decisions."""

    tool: Tool[Any]
    input: Any
    ctx: ToolContext
    hook: Requirement | None = None
    risk: CallRisk = NO_RISK


class PermissionPolicy(Protocol):
    """The rules part of the permission decision, supplied by the host.

    It is one input of `agentls.agent.run.decision.decide` (after hook denials, secret files,
    plan mode and the tool's refusal), and it keeps the ask flow: a `needs_approval`
    requirement goes back to it (`approve`) to be resolved by the user.
    """

    @property
    def mode(self) -> PermissionMode:
        """The permission mode; the decision forbids every change in "plan"."""
        ...

    def requirement(self, call: PendingCall) -> Requirement:
        """What one call needs, before anyone is asked (pure).

        `call.hook` is a PreToolUse hook's "allow" or "ask" (a "deny" never gets here);
        `call.risk` what the tool found out about the call (`Tool.assess`; a refusal never
        gets here either).
        """
        ...

    async def approve(self, call: PendingCall, needed: Requirement) -> Requirement:
        """Resolve a `needs_approval` requirement: skip when the user allowed the call,
        forbidden (with why) otherwise. Whatever else comes back is treated as forbidden,
        so a host without an approver fails closed."""
        ...


class AllowAll:
    """Allows every call the decision's own steps let through (no rules, never asks)."""

    mode: PermissionMode = "default"

    def requirement(self, call: PendingCall) -> Requirement:
        return Requirement.skip()

    async def approve(self, call: PendingCall, needed: Requirement) -> Requirement:
        return Requirement.skip()


ApprovalChoice = Literal["allow_once", "allow_session", "deny", "cancelled"]
"""The user's answer. "cancelled": the prompt went away unanswered (the run was cancelled,
the client withdrew it); treated like "deny", and nothing is remembered."""

ApprovalKind = Literal["read", "edit", "delete", "move", "search", "execute", "other"]
"""What the call does, in the words of ACP's tool-call kinds (a host may pick an icon)."""


@dataclass(frozen=True)
class ApprovalRequest:
    """What the user is asked about: enough to decide without reading the raw input.

    `remember` lists what "allow for this session" would remember (e.g.
    `["run_command(npm test)"]`); it is empty when the call can only be allowed once
    (an `ask` rule matched, or the tool always asks), so the host can hide that choice.
    `paths` are the absolute paths the call names (ACP's tool-call `locations`).
    """

    session_id: str
    tool: str
    summary: str
    reason: str
    input: JsonObject = field(default_factory=dict)
    remember: tuple[str, ...] = ()
    tool_use_id: str = ""
    kind: ApprovalKind = "other"
    paths: tuple[str, ...] = ()

    @property
    def can_remember(self) -> bool:
        return bool(self.remember)


class Approver(Protocol):
    """The "ask the user" port: one implementation per host (LSP, CLI through LSP, ACP).

    Must not raise for a dismissed prompt: return "deny" (or "cancelled" when the client
    dropped the question). When the run no longer needs the answer (cancel), the awaiting
    task is cancelled: withdraw the prompt if the protocol can (LSP `$/cancelRequest`, ACP
    `$/cancel_request`) and re-raise; an answer arriving later is ignored.
    """

    async def ask(self, request: ApprovalRequest) -> ApprovalChoice: ...
