"""`decide(call) -> Requirement`: the one permission decision every tool call gets.

Modelled on codex-rs's tool orchestrator (one requirement, then the approval, then the
attempt) and on pydantic-ai's toolsets (permission as a small wrapper around a call). The
pipeline asks once, before a call runs, and once more for a follow-up of a running call
(`ToolContext.recheck`); nothing else decides whether a call may run.

Inputs, first decisive one wins:

1. a PreToolUse hook that blocks or says "deny" → forbidden (its reason reaches the model);
2. secret files (`agentls.agent.permissions.guards.secret_file_denial`) → forbidden, in every mode;
3. plan mode (the run's or the permission mode) and a call that is not read-only →
   forbidden;
4. the tool's own findings with the sandbox's answer (`Tool.assess` → `CallRisk`): a
   refusal (the sandbox should run but cannot and the fallback refuses) → forbidden;
5. the host's `PermissionPolicy` (`agentls.agent.permissions.policy.RulePolicy`:
   deny/ask/allow rules, the permission mode, the hook's "allow" or "ask", the tool's
   `approval`, protected paths, "allow for this session") → skip, forbidden or needs
   approval.

Steps 1-4 are no host's configuration: no policy, no hooks, a settings file that failed to
load — none can leave them out. A `needs_approval` answer goes to the policy's approver
(`PermissionPolicy.approve`), which turns it into skip or forbidden.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from agentls.agent.framework.requirement import Requirement
from agentls.agent.permissions.approval import PendingCall
from agentls.agent.permissions.guards import plan_mode_denial, secret_file_denial

if TYPE_CHECKING:
    from agentls.agent.hooks.runner import HookOutcome
    from agentls.agent.permissions.approval import PermissionPolicy
    from agentls.config.base import PermissionMode

__all__ = ["decide", "hook_requirement", "requirement_for"]

HOOK_REFUSED = "a pre-tool hook refused this call"


def hook_requirement(outcome: HookOutcome) -> Requirement | None:
    """A PreToolUse hook's say as a requirement: a block and a "deny" are both forbidden
    (the model hears "Blocked by hook: …"); "allow" and "ask" are weighed by the policy."""
    hook = outcome.permission
    if outcome.block or (hook is not None and hook.kind == "forbidden"):
        reason = outcome.message if outcome.block else (hook.reason if hook else "")
        return Requirement.forbidden(
            reason or HOOK_REFUSED, told=f"Blocked by hook: {reason or HOOK_REFUSED}"
        )
    return hook


def _own_steps(call: PendingCall, mode: PermissionMode) -> Requirement | None:
    """Steps 1-3 (see the module docstring): what no configuration may allow."""
    if call.hook is not None and call.hook.kind == "forbidden":
        return call.hook
    secret = secret_file_denial(call.tool.name, call.input, call.ctx)
    if secret is not None:
        return Requirement.forbidden(secret)
    plan = plan_mode_denial(call.tool, call.input, call.ctx, mode)
    if plan is not None:
        return Requirement.forbidden(plan, told=plan)
    return None


def requirement_for(call: PendingCall, policy: PermissionPolicy) -> Requirement:
    """The decision for a call whose facts are known (`call.risk` assessed): pure, nobody
    is asked. `decide` is this with the tool's assessment made first."""
    own = _own_steps(call, policy.mode)
    if own is not None:
        return own
    if call.risk.needs.kind == "forbidden":
        return call.risk.needs
    return policy.requirement(call)


async def decide(call: PendingCall, policy: PermissionPolicy) -> Requirement:
    """The one permission decision for `call` (see the module docstring). The tool is
    asked about the call (`Tool.assess`, which may probe the sandbox) only when the steps
    before it let it through: a refused call costs nothing and reveals nothing."""
    own = _own_steps(call, policy.mode)
    if own is not None:
        return own
    risk = await call.tool.assess(call.input, call.ctx)
    return requirement_for(replace(call, risk=risk), policy)
