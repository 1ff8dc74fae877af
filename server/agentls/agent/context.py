"""`ToolContext`: the one typed object every tool receives (like pydantic-ai's `RunContext`)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from agentls.config.base import RunMode as RunMode
from agentls.workspace import ChangeSet, Workspace


def _ignore_progress(message: str) -> None:
    del message


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

    def for_call(self, tool_use_id: str) -> ToolContext:
        return replace(self, tool_use_id=tool_use_id)
