"""`RunControls`: what the session-level tools may do to the run they are called in.

`todo_write` replaces the session's todo list, `task` starts a sub-agent, the plan-mode
tools switch the run's mode, `ask_user_question` reaches the user through the host's
`UserPrompts`. Tools get these through `ToolContext.run`; the loop provides them. A call
made outside a run (`agentls.tool`, a test) gets `NoRunControls`, which refuses with a
message the caller can act on.

Mode switches go through the places that already decide plan mode: the run's mode (read by
`guards.plan_mode_denial`) and the pool's read-only filter (`Conversation.pool`). The loop
applies a switch after the current batch of calls, so every later call and the next
request's tools follow the new mode.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from agentls.errors import ToolError

if TYPE_CHECKING:
    from agentls.agent.accounting import Tally
    from agentls.agent.context import RunMode, ToolContext
    from agentls.agent.permissions import PermissionMode
    from agentls.agent.questions import UserPrompts
    from agentls.agent.subagents import AgentType
    from agentls.agent.todos import TodoItem

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
        self, agent: AgentType, description: str, prompt: str, ctx: ToolContext
    ) -> SubagentReport:
        """Run a sub-agent to the end (or until the run is cancelled)."""
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
        self, agent: AgentType, description: str, prompt: str, ctx: ToolContext
    ) -> SubagentReport:
        raise ToolError(NOT_IN_A_RUN.format(tool="task"))
