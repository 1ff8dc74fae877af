"""Pre- and post-tool hooks, as a runner object the host supplies (default: no hooks).

A pre-hook may block a call, rewrite its input or give a permission decision; a post-hook
may block (replace the result with an error the model sees) or append context. Hooks are
configuration, not safety: secret files, credential redaction and plan mode are pipeline
steps that hold whatever the hooks do. User-configured hook commands (Claude Code's format)
are run by `agentls.agent.hook_commands.CommandHooks`, which also implements the
prompt-level `LifecycleHooks` (UserPromptSubmit, Stop).
"""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, cast, runtime_checkable

if TYPE_CHECKING:
    from agentls.agent.context import ToolContext
    from agentls.agent.tool import ToolOutput


HookPermission = Literal["allow", "ask", "deny"]


@dataclass(frozen=True)
class HookDecision:
    """A PreToolUse hook's say on permission (Claude Code's `permissionDecision` and
    `permissionDecisionReason`). "deny" refuses the call; "ask" sends it to the user even
    where a rule would allow it; "allow" skips the prompt. Deny rules, secret files and
    plan mode hold whatever a hook says."""

    behavior: HookPermission
    reason: str = ""


@dataclass(frozen=True)
class HookOutcome:
    block: bool = False
    message: str = ""
    updated_input: dict[str, Any] | None = None
    additional_context: str = ""
    permission: HookDecision | None = None
    """Pre-tool only: weighed with the rules in the pipeline's permission step."""


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


@runtime_checkable
class LifecycleHooks(Protocol):
    """Hooks around a whole prompt, beside the per-tool ones (Claude Code's
    `UserPromptSubmit` and `Stop`). Optional: the loop calls them only when the configured
    runner has them, so a `HookRunner` written before they existed keeps working.
    """

    async def user_prompt_submit(self, prompt: str, ctx: ToolContext) -> HookOutcome:
        """`block` drops the prompt (the run ends, `message` says why);
        `additional_context` is added to the prompt for the model."""
        ...

    async def stop(self, ctx: ToolContext, *, stop_hook_active: bool) -> HookOutcome:
        """`block` keeps the agent going: `message` becomes the next user message."""
        ...


def lifecycle_hooks(hooks: object) -> LifecycleHooks | None:
    """The prompt-level hooks of a runner, or None when it has none."""
    return hooks if isinstance(hooks, LifecycleHooks) else None


class SubagentStopHook(Protocol):
    """Claude Code's `SubagentStop`, called when a sub-agent is about to finish; `block`
    keeps the sub-agent going with `message` as its next user message."""

    def __call__(self, ctx: ToolContext, *, stop_hook_active: bool) -> Awaitable[HookOutcome]: ...


def subagent_stop_hook(hooks: object) -> SubagentStopHook | None:
    """The runner's `subagent_stop` hook, or None when it has none (optional, like the
    prompt-level hooks: a runner written before it existed keeps working)."""
    hook = getattr(hooks, "subagent_stop", None)
    return cast(SubagentStopHook, hook) if callable(hook) else None
