"""Pre- and post-tool hooks, as a runner object the host supplies (default: no hooks).

A pre-hook may block a call or rewrite its input; a post-hook may block (replace the
result with an error the model sees) or append context. User-configured hook commands
(Claude Code's format) are run by `agentls.agent.hook_commands.CommandHooks`, which also
implements the prompt-level `LifecycleHooks` (UserPromptSubmit, Stop).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

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
    """The prompt-level hooks of a runner, looking through wrappers.

    A wrapper that only forwards `pre_tool`/`post_tool` (such as a host's auto-delivery
    wrapper) keeps the runner it wraps in `inner`; we look there so that wrapping a
    runner never silently disables its prompt and stop hooks.
    """
    seen = 0
    current: object | None = hooks
    while current is not None and seen < 8:
        if isinstance(current, LifecycleHooks):
            return current
        current = getattr(current, "inner", None)
        seen += 1
    return None


HookPermission = Literal["allow", "ask"]


@dataclass
class HookVerdicts:
    """Permission decisions PreToolUse hooks made, passed to the policy for the same call.

    Why a side channel: the pipeline runs hooks and the permission check as separate
    steps, and a hook's `permissionDecision: "allow" | "ask"` must reach the policy.
    Keyed by (session id, tool_use id), taken once.
    """

    _items: dict[tuple[str, str], tuple[HookPermission, str]] = field(default_factory=dict)

    def put(self, session_id: str, tool_use_id: str, decision: HookPermission, reason: str) -> None:
        if len(self._items) > 10_000:  # calls whose permission step never ran (blocked)
            self._items.clear()
        self._items[(session_id, tool_use_id)] = (decision, reason)

    def take(self, session_id: str, tool_use_id: str) -> tuple[HookPermission, str] | None:
        return self._items.pop((session_id, tool_use_id), None)
