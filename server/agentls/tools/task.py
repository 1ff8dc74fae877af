"""`task`: hand a self-contained task to a sub-agent and get its final report back.

The sub-agent runs with its own context (only its report enters the session's history),
the tools of its type, and the session's changeset, permissions and cancel event (see
`agentls.agent.run.subagent_run`). The call itself changes nothing: whatever the sub-agent
does goes through the pipeline call by call, so `task` counts as read-only for the
permission step (in plan mode the sub-agent runs in plan mode too). A type whose tools are
all read-only (`explore`) runs in parallel with other read-only calls.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import Field

from agentls.agent.claude.subagents import (
    CLAUDE_AGENT_TOOLS,
    SUBAGENT_EXCLUDED_TOOLS,
    TASK_TOOL,
    AgentCatalog,
    AgentType,
)
from agentls.agent.framework.context import ToolContext
from agentls.agent.framework.controls import SubagentReport
from agentls.agent.framework.tool import Tool, ToolInput, ToolOutput

DEFAULT_TYPE = "general-purpose"

USAGE = """Launch a sub-agent that works on a complex, multi-step task on its own and \
returns one final report. It starts with a fresh context, so only its report enters yours.

Sub-agent types (`subagent_type`; default general-purpose):
{types}

When to use it:
- Open-ended searches that may take several rounds of grep, list_files and read_file: an \
explore agent returns just its findings.
- Several independent questions about the codebase: launch one explore agent per question \
in the same turn; read-only sub-agents run in parallel.
- A self-contained part of a larger change (general-purpose), when its details need not \
stay in your context.

When not to use it:
- To read a file whose path you know (read_file), to find a known class or function \
(search_symbols, grep), or to search within two or three files: do it yourself, faster.
- For work you can finish in one or two tool calls.

How to write the prompt:
- The sub-agent knows nothing of this conversation. Make the prompt self-contained: the \
goal, what you already know (paths, names, the error message), what exactly to report back, \
and whether it should change files or only research.
- Its report comes back to you, not to the user: tell the user what matters in your answer.
- Its edits are staged in this session with yours; its tool calls need the same permissions.
- Sub-agents cannot launch sub-agents, ask the user questions or use plan mode.

Example: {{"description": "Find the auth middleware", "prompt": "Find where HTTP requests \
are authenticated in this repository. Report the file paths and line numbers of the \
middleware, how tokens are validated, and which routes skip it. Do not change files.", \
"subagent_type": "explore"}}"""


class TaskInput(ToolInput):
    description: str = Field(
        min_length=1,
        max_length=100,
        description="A short (3-6 word) title of the task, shown to the user.",
    )
    prompt: str = Field(
        min_length=1,
        max_length=100_000,
        description="The full, self-contained task for the sub-agent.",
    )
    subagent_type: str | None = Field(
        default=None,
        description=f"Which kind of sub-agent to launch (default {DEFAULT_TYPE}).",
    )


class Task(Tool[TaskInput]):
    name = TASK_TOOL
    input_model = TaskInput
    search_hint = "sub-agent subagent delegate explore parallel research agent"
    max_result_chars = 60_000

    def __init__(self, catalog: AgentCatalog, tools: Sequence[Tool[Any]] = ()) -> None:
        self.catalog = catalog
        self._read_only_names = frozenset(t.name for t in tools if _read_only(t))

    usage = USAGE
    """A template: `description()` fills in the types, read from the catalog each time the
    session's tools are assembled (an agent file added later shows in the next session)."""

    def description(self) -> str:
        return USAGE.format(types=self._types_text()).strip()

    def _types_text(self) -> str:
        lines = []
        for agent in self.catalog.types():
            lines.append(f"- {agent.name}: {agent.description} (Tools: {_tools_text(agent)})")
        return "\n".join(lines)

    def is_read_only(self, input: TaskInput | None = None) -> bool:
        return True

    def is_concurrency_safe(self, input: TaskInput) -> bool:
        agent = self.catalog.find(input.subagent_type or DEFAULT_TYPE)
        return agent is not None and self._runs_read_only(agent)

    def _runs_read_only(self, agent: AgentType) -> bool:
        if agent.read_only_tools:
            return True
        if agent.tools is None:
            return False
        names = set(_wanted(agent)) - SUBAGENT_EXCLUDED_TOOLS
        return bool(names) and names <= self._read_only_names

    def summary(self, input: TaskInput) -> str:
        return f"{input.subagent_type or DEFAULT_TYPE}: {input.description}"

    async def validate_input(self, input: TaskInput, ctx: ToolContext) -> str | None:
        if ctx.run.subagent is not None:
            return "A sub-agent cannot launch sub-agents; do the work yourself."
        name = input.subagent_type or DEFAULT_TYPE
        if self.catalog.find(name) is None:
            known = ", ".join(t.name for t in self.catalog.types())
            return f"Unknown subagent_type {name!r}. Available types: {known}."
        return None

    async def call(self, input: TaskInput, ctx: ToolContext) -> ToolOutput:
        agent = self.catalog.find(input.subagent_type or DEFAULT_TYPE)
        assert agent is not None  # validate_input checked it
        report = await ctx.run.run_subagent(agent, input.description, input.prompt, ctx)
        return report_output(report)


def report_output(report: SubagentReport) -> ToolOutput:
    """The `task` result: the sub-agent's report, or what stopped it."""
    text = report.text.strip()
    name = report.agent
    if report.status == "completed":
        return ToolOutput(text or f"(the {name} sub-agent finished without a report)")
    partial = f"\n\nIts last message:\n{text}" if text else ""
    if report.status == "cancelled":
        why = f"The {name} sub-agent was cancelled before it finished."
    elif report.status == "max_turns":
        why = (
            f"The {name} sub-agent stopped after {report.turns} turns (the turn limit) "
            "without finishing. Give it a narrower task, or finish the work yourself."
        )
    elif report.status == "refused":
        why = f"The {name} sub-agent's model refused the task."
    else:
        why = f"The {name} sub-agent failed: {report.error or 'unknown error'}."
    return ToolOutput(why + partial, is_error=True)


def _wanted(agent: AgentType) -> list[str]:
    names: list[str] = []
    for name in agent.tools or ():
        names.extend(CLAUDE_AGENT_TOOLS.get(name, (name,)))
    return names


def _tools_text(agent: AgentType) -> str:
    if agent.read_only_tools:
        return "read-only tools"
    if agent.tools is None:
        return "all tools except task"
    names = [n for n in dict.fromkeys(_wanted(agent)) if n not in SUBAGENT_EXCLUDED_TOOLS]
    return ", ".join(names) if names else "none"


def _read_only(tool: Tool[Any]) -> bool:
    try:
        return bool(tool.is_read_only(None))
    except Exception:
        return False
