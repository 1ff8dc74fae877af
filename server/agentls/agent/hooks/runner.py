"""Pre- and post-tool hooks, as a runner object the host supplies (default: no hooks).

A pre-hook may block a call, rewrite its input or give a permission decision; a post-hook
may block (replace the result with an error the model sees) or append context. Hooks are
configuration, not safety: secret files, credential redaction and plan mode are pipeline
steps that hold whatever the hooks do. User-configured hook commands (Claude Code's format)
are run by `agentls.agent.hooks.commands.CommandHooks`, which also implements the
prompt-level `LifecycleHooks` (UserPromptSubmit, Stop) and the optional event protocols
below: `SessionHooks` (SessionStart, SessionEnd), `CompactionHooks` (PreCompact),
`SubagentHooks` (SubagentStop) and `NotificationHooks` (Notification). Callers look each
one up with its accessor (`subagent_hooks(runner)` …) and skip the event when a runner
has no such method, so a runner written before an event existed keeps working.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

from agentls.agent.protocol.messages import JsonObject

if TYPE_CHECKING:
    from agentls.agent.framework.context import ToolContext
    from agentls.agent.framework.requirement import Requirement
    from agentls.agent.framework.tool import ToolOutput


HookPermission = Literal["allow", "ask", "deny"]


@dataclass(frozen=True)
class HookOutcome:
    """What a hook said: an input to the permission decision and to the result, never a
    decision itself (`block` and a "deny" are folded into one by `decide`)."""

    block: bool = False
    message: str = ""
    updated_input: JsonObject | None = None
    additional_context: str = ""
    permission: Requirement | None = None
    """A PreToolUse (or PermissionRequest) hook's `permissionDecision`, read as a
    `Requirement`: one input of the permission decision (`agentls.agent.run.decision.decide`),
    where deny rules, secret files and plan mode hold whatever a hook says."""
    system_message: str = ""
    """A message for the user, not the model (Claude Code's `systemMessage`)."""


class HookRunner(Protocol):
    async def pre_tool(
        self, tool_name: str, input: JsonObject, ctx: ToolContext
    ) -> HookOutcome: ...

    async def post_tool(
        self, tool_name: str, input: JsonObject, output: ToolOutput, ctx: ToolContext
    ) -> HookOutcome: ...


class NoHooks:
    async def pre_tool(self, tool_name: str, input: JsonObject, ctx: ToolContext) -> HookOutcome:
        return HookOutcome()

    async def post_tool(
        self, tool_name: str, input: JsonObject, output: ToolOutput, ctx: ToolContext
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


@runtime_checkable
class SessionHooks(Protocol):
    """SessionStart and SessionEnd (Claude Code's events of the same names)."""

    async def session_start(self, ctx: ToolContext, *, source: str) -> HookOutcome:
        """Before a session's first prompt: `source` is "startup" (a new session),
        "resume" (a saved one continued) or "compact" (after a compaction).
        `additional_context` goes to the model with the prompt."""
        ...

    async def session_end(self, ctx: ToolContext, *, reason: str) -> HookOutcome:
        """When a session ends ("other": the server shuts down). Cannot block."""
        ...


@runtime_checkable
class CompactionHooks(Protocol):
    """PreCompact."""

    async def pre_compact(
        self, ctx: ToolContext, *, trigger: str, custom_instructions: str = ""
    ) -> HookOutcome:
        """Before a compaction; `trigger` is "manual" or "auto". Cannot block."""
        ...


@runtime_checkable
class SubagentHooks(Protocol):
    """SubagentStop: for the `task` tool's sub-agents."""

    async def subagent_stop(
        self,
        ctx: ToolContext,
        *,
        agent_type: str,
        stop_hook_active: bool,
        agent_id: str = "",
        transcript_path: str = "",
        last_message: str = "",
    ) -> HookOutcome:
        """When a sub-agent is about to return its report. `ctx` is the sub-agent's
        context (its session id); `agent_type` its type (`general-purpose`, `explore`, a
        user-defined name), which hook matchers match; `stop_hook_active` is true when the
        sub-agent already continued because of a SubagentStop hook. `block` keeps the
        sub-agent going: `message` becomes its next user message."""
        ...


@runtime_checkable
class NotificationHooks(Protocol):
    """Notification: when agentls needs the user (a permission prompt opens)."""

    async def notification(
        self,
        session_id: str,
        message: str,
        *,
        notification_type: str = "permission_prompt",
        title: str = "agentls",
    ) -> HookOutcome:
        """Tell Notification hooks; they run in the background and cannot block."""
        ...


def session_hooks(hooks: object) -> SessionHooks | None:
    return hooks if isinstance(hooks, SessionHooks) else None


def compaction_hooks(hooks: object) -> CompactionHooks | None:
    return hooks if isinstance(hooks, CompactionHooks) else None


def subagent_hooks(hooks: object) -> SubagentHooks | None:
    """The SubagentStop hook of a runner (`CommandHooks` has one), or None."""
    return hooks if isinstance(hooks, SubagentHooks) else None


def notification_hooks(hooks: object) -> NotificationHooks | None:
    return hooks if isinstance(hooks, NotificationHooks) else None
