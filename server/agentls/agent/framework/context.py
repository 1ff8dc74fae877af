"""`ToolContext`: the one typed object every tool receives (like pydantic-ai's `RunContext`).

It holds `RunControls` (`ToolContext.run`), what the session-level tools may do to the run
they are called in: `todo_write` replaces the session's todo list, `task` starts a
sub-agent, the plan-mode tools switch the run's mode, `ask_user_question` reaches the user
through the host's `UserPrompts`. The loop provides them; a call made outside a run
(`agentls.tool`, a test) gets `NoRunControls`, which refuses with a message the caller can
act on. They live here, with the context they are part of, so the two do not import each
other (`agentls.agent.framework.controls` re-exports them).

Mode switches change the run's mode, which the one permission decision reads
(`agentls.agent.run.decision.decide` forbids every change in plan mode) and which picks the
pool the model is offered (`Conversation.pool`: read-only tools only in plan mode). The loop
applies a switch after the current batch of calls, so every later call and the next
request's tools follow the new mode.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from agentls.agent.framework.reads import ReadLog
from agentls.agent.framework.services import ToolServices
from agentls.agent.protocol.messages import JsonObject
from agentls.config.base import PermissionMode
from agentls.config.base import RunMode as RunMode
from agentls.errors import ToolError
from agentls.workspace import ChangeSet, Workspace

if TYPE_CHECKING:
    from agentls.agent.claude.subagents import AgentType
    from agentls.agent.framework.questions import UserPrompts
    from agentls.agent.framework.todos import TodoItem
    from agentls.agent.protocol.accounting import Tally


NOT_IN_A_RUN = (
    "{tool} works only while the agent runs a prompt (not as a single tool call): the "
    "session's todo list, sub-agents, questions and plan mode belong to a run"
)


@dataclass(frozen=True)
class SubagentReport:
    """How a sub-agent's run ended: its final answer is the `task` call's result."""

    agent: str
    status: str
    text: str
    turns: int
    tally: Tally
    transcript: Path
    error: str | None = None


class RunControls(Protocol):
    """The run as the session-level tools see it."""

    @property
    def in_run(self) -> bool:
        """False outside a run (a single tool call): the controls only refuse."""
        ...

    @property
    def mode(self) -> RunMode:
        """The run's mode now (`plan` while planning)."""
        ...

    @property
    def permission_mode(self) -> PermissionMode: ...

    @property
    def subagent(self) -> str | None:
        """The type of sub-agent this run is, or None for the session's own run."""
        ...

    @property
    def prompts(self) -> UserPrompts | None:
        """Where questions go; None when nobody can be asked (or in a sub-agent)."""
        ...

    def todos(self) -> list[TodoItem]: ...

    def set_todos(self, todos: Sequence[TodoItem]) -> None:
        """Replace the todo list (and show it)."""
        ...

    def switch_mode(self, mode: RunMode, permission_mode: PermissionMode | None = None) -> None:
        """Switch the run's mode (and the session's permission mode) after this batch."""
        ...

    async def run_subagent(
        self,
        agent: AgentType,
        description: str,
        prompt: str,
        ctx: ToolContext,
        cancel: asyncio.Event | None = None,
    ) -> SubagentReport:
        """Run a sub-agent to the end (or until the run is cancelled). `cancel`: an event
        of its own (a hook's verifier), so stopping it leaves the run going."""
        ...


class NoRunControls:
    """Outside a run: every control refuses with a clear message."""

    in_run = False
    mode: RunMode = "review"
    permission_mode: PermissionMode = "default"
    subagent: str | None = None
    prompts: UserPrompts | None = None

    def todos(self) -> list[TodoItem]:
        return []

    def set_todos(self, todos: Sequence[TodoItem]) -> None:
        raise ToolError(NOT_IN_A_RUN.format(tool="todo_write"))

    def switch_mode(self, mode: RunMode, permission_mode: PermissionMode | None = None) -> None:
        raise ToolError(NOT_IN_A_RUN.format(tool="plan mode"))

    async def run_subagent(
        self,
        agent: AgentType,
        description: str,
        prompt: str,
        ctx: ToolContext,
        cancel: asyncio.Event | None = None,
    ) -> SubagentReport:
        raise ToolError(NOT_IN_A_RUN.format(tool="task"))


def _ignore_progress(message: str) -> None:
    del message


def _ignore_tool_progress(tool_use_id: str, message: str) -> None:
    del tool_use_id, message


class EditSink(Protocol):
    """Where staged edits go as they happen: the host's side of a write tool.

    Write tools call `staged` right after they staged a change, inside the call, so the
    model hears in the tool result whether the editor applied it and the next call starts
    only after delivery. The host decides: in auto delivery it hands the session's staged
    changes to the editor now; in review (and plan) they wait for the end of the run.
    """

    async def staged(self, ctx: ToolContext) -> str:
        """Deliver now if this run delivers as it goes; a line for the model, or ""."""
        ...


class KeepStaged:
    """The default sink: nothing is delivered during the run (headless hosts, tests)."""

    async def staged(self, ctx: ToolContext) -> str:
        return ""


class FollowUpCheck(Protocol):
    """The pipeline's permission step for a follow-up of the current call (see `recheck`)."""

    async def __call__(self, raw_input: JsonObject) -> str | None: ...


async def _no_permission_step(raw_input: JsonObject) -> str | None:
    """Outside the pipeline nothing can be re-checked: a follow-up is refused (fail closed)."""
    del raw_input
    return "no permission step is available to check it"


@dataclass(frozen=True)
class ToolContext:
    """What a tool may see and use during one call.

    `workspace` is shared by all sessions (roots, ignore rules, editor buffers); `changes`
    is this session's staged changeset, layered on top when tools read; `services` are the
    workspace's typed services a tool uses (`agentls.agent.framework.services.ToolServices`).
    """

    session_id: str
    workspace: Workspace
    changes: ChangeSet
    mode: RunMode = "review"
    cancelled: asyncio.Event = field(default_factory=asyncio.Event)
    tool_use_id: str = ""
    agent_id: str = ""
    """A sub-agent's calls: its id (hooks get it as `agent_id`); "" for the main agent."""
    agent_type: str = ""
    """A sub-agent's calls: its type (hooks get it as `agent_type`)."""
    report_progress: Callable[[str], None] = _ignore_progress
    """A line about the call in progress (e.g. an MCP server's progress), for the user."""
    edits: EditSink = field(default_factory=KeepStaged)
    on_progress: Callable[[str, str], None] = _ignore_tool_progress
    """(tool_use_id, message): where each call's `report_progress` goes (the loop emits
    a `ToolProgress` event)."""
    run: RunControls = field(default_factory=NoRunControls)
    """The run this call belongs to (todo list, sub-agents, questions, plan mode)."""
    recheck: FollowUpCheck = _no_permission_step
    """Set by the pipeline for each call: runs the permission steps (pre-tool hooks, secret
    files, plan mode, `Tool.assess`, the policy — which may ask the user) for the same tool
    with another input, e.g. the redirect `web_fetch` is about to follow. None: allowed;
    else why not. A tool uses it instead of deciding anything about permission itself."""
    reads: ReadLog | None = None
    """What this session read (`agentls.agent.framework.reads`): `edit_file` refuses a file
    it has not read or that changed since. None outside a session (a tool called on its own)."""
    services: ToolServices = None  # type: ignore[assignment]  # set in __post_init__
    """The workspace's typed services this call may use (sandbox, secrets, read roots,
    environment, editor files, terminal, code intelligence, skills, sub-agent types, the
    checks' tools): `agentls.agent.framework.services`, built by the runtime and passed in by
    the session. A context made without them (a test, a script) gets the defaults."""

    def __post_init__(self) -> None:
        if self.services is None:
            object.__setattr__(self, "services", ToolServices(self.workspace))

    def for_call(self, tool_use_id: str) -> ToolContext:
        return replace(
            self,
            tool_use_id=tool_use_id,
            report_progress=partial(self.on_progress, tool_use_id),
        )
