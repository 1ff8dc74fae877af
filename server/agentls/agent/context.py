"""`ToolContext`: the one typed object every tool receives (like pydantic-ai's `RunContext`)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, Protocol

from agentls.agent.controls import NoRunControls, RunControls
from agentls.agent.reads import ReadLog
from agentls.config.base import RunMode as RunMode
from agentls.workspace import ChangeSet, Workspace


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

    async def __call__(self, raw_input: dict[str, Any]) -> str | None: ...


async def _no_permission_step(raw_input: dict[str, Any]) -> str | None:
    """Outside the pipeline nothing can be re-checked: a follow-up is refused (fail closed)."""
    del raw_input
    return "no permission step is available to check it"


@dataclass(frozen=True)
class ToolContext:
    """What a tool may see and use during one call.

    `workspace` is shared by all sessions (roots, ignore rules, editor buffers); `changes`
    is this session's staged changeset, layered on top when tools read.
    """

    session_id: str
    workspace: Workspace
    changes: ChangeSet
    mode: RunMode = "review"
    cancelled: asyncio.Event = field(default_factory=asyncio.Event)
    tool_use_id: str = ""
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
    """What this session read (`agentls.agent.reads`): `edit_file` refuses a file it has not
    read or that changed since. None outside a session (a tool called on its own)."""

    def for_call(self, tool_use_id: str) -> ToolContext:
        return replace(
            self,
            tool_use_id=tool_use_id,
            report_progress=partial(self.on_progress, tool_use_id),
        )
