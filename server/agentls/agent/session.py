"""`AgentSession`: one conversation with the model, continued by follow-up prompts.

Holds the message history, usage totals, the session's staged changeset and its transcript.
One run at a time; `run()` drives the loop in `agentls.agent.loop`.
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentls.agent.context import RunMode, ToolContext
from agentls.agent.events import EventSink, RunStatus, ignore_event
from agentls.agent.hooks import HookRunner, NoHooks
from agentls.agent.model_client import ModelClient, ModelRequest
from agentls.agent.permissions import AllowAll, PermissionPolicy
from agentls.agent.prompts import build_system_prompt
from agentls.agent.registry import CACHE_CONTROL, AnyTool, PoolFilter, ToolPool
from agentls.agent.settings import AgentSettings
from agentls.agent.transcript import TranscriptWriter, transcript_dir
from agentls.agent.usage import Usage
from agentls.workspace import ChangeSet, Workspace


class SessionBusy(Exception):
    """A run was started on a session that is already running one."""


@dataclass(frozen=True)
class RunResult:
    session_id: str
    status: RunStatus
    text: str
    usage: Usage
    turns: int
    transcript: Path
    error: str | None = None
    notices: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        result: dict[str, Any] = {
            "session": self.session_id,
            "status": self.status,
            "text": self.text,
            "usage": self.usage.to_dict(),
            "turns": self.turns,
            "transcript": self.transcript.as_uri(),
        }
        if self.error:
            result["error"] = self.error
        if self.notices:
            result["notices"] = list(self.notices)
        return result


@dataclass
class SessionConfig:
    """Everything a host decides about a session; the defaults suit tests and scripts."""

    settings: AgentSettings
    workspace: Workspace
    tools: Sequence[AnyTool] = ()
    external_tools: Sequence[AnyTool] = ()
    permissions: PermissionPolicy = field(default_factory=AllowAll)
    hooks: HookRunner = field(default_factory=NoHooks)
    pool_filter: PoolFilter = field(default_factory=PoolFilter)
    instructions: str = ""
    transcript_dir: Path | None = None


class AgentSession:
    def __init__(self, client: ModelClient, config: SessionConfig, session_id: str | None = None):
        self.id = session_id or uuid.uuid4().hex[:12]
        self.client = client
        self.config = config
        self.settings = config.settings
        self.messages: list[dict[str, Any]] = []
        self.usage = Usage()
        self.turns = 0
        self.runs = 0
        self.status: str = "idle"
        self.changes = ChangeSet()
        self.system = build_system_prompt(config.workspace.roots, config.instructions)
        self._pools: dict[bool, ToolPool] = {}
        self._cancel: asyncio.Event | None = None
        folder = config.transcript_dir or transcript_dir()
        self.transcript = TranscriptWriter(folder / f"{self.id}.jsonl")
        self.transcript.write(
            "session",
            session_id=self.id,
            model=self.settings.model,
            workspace=[str(r) for r in config.workspace.roots],
            tools=self.pool("review").names,
        )

    @property
    def running(self) -> bool:
        return self._cancel is not None

    def pool(self, mode: RunMode) -> ToolPool:
        """The session's pool for a mode; cached so its `tools` array stays byte-identical."""
        read_only = mode == "plan" or self.config.pool_filter.read_only
        if read_only not in self._pools:
            flt = PoolFilter(read_only=read_only, denied=self.config.pool_filter.denied)
            self._pools[read_only] = ToolPool.assemble(
                self.config.tools, self.config.external_tools, flt
            )
        return self._pools[read_only]

    def tool_context(self, mode: RunMode, cancelled: asyncio.Event) -> ToolContext:
        return ToolContext(
            session_id=self.id,
            workspace=self.config.workspace,
            changes=self.changes,
            mode=mode,
            cancelled=cancelled,
        )

    async def run(
        self, prompt: str, *, events: EventSink = ignore_event, mode: RunMode = "review"
    ) -> RunResult:
        """Run the agent on a prompt (a follow-up if the session already has history)."""
        from agentls.agent.loop import AgentLoop

        if self._cancel is not None:
            raise SessionBusy(f"session {self.id} is already running; cancel it or wait")
        self._cancel = asyncio.Event()
        self.status = "running"
        try:
            result = await AgentLoop(self, events, mode, self._cancel).run(prompt)
        finally:
            self._cancel = None
        self.status = result.status
        return result

    def cancel(self) -> bool:
        """Ask the running run to stop; returns whether one was running."""
        if self._cancel is None:
            return False
        self._cancel.set()
        return True

    def add_user_content(self, blocks: list[dict[str, Any]]) -> None:
        """Append user content, merging into a trailing user message (roles must alternate)."""
        if self.messages and self.messages[-1]["role"] == "user":
            self.messages[-1]["content"].extend(blocks)
        else:
            self.messages.append({"role": "user", "content": list(blocks)})
        self.transcript.write("message", role="user", content=blocks)

    def add_assistant(self, content: list[dict[str, Any]]) -> None:
        if content:
            self.messages.append({"role": "assistant", "content": content})
        self.transcript.write("message", role="assistant", content=content)

    def build_request(self, pool: ToolPool) -> ModelRequest:
        """The next request: cache breakpoints on tools, system and the latest message."""
        return ModelRequest(
            model=self.settings.model,
            max_tokens=self.settings.max_tokens,
            system=self.system,
            tools=pool.api_tools(),
            messages=_with_cache_breakpoint(self.messages),
            temperature=self.settings.temperature,
        )

    def record_request(self, run: int, request: ModelRequest) -> None:
        tools_json = json.dumps(request.tools, separators=(",", ":"))
        self.transcript.write(
            "request",
            run=run,
            turn=self.turns,
            model=request.model,
            max_tokens=request.max_tokens,
            message_count=len(request.messages),
            system_chars=sum(len(b.get("text", "")) for b in request.system),
            tools=[t["name"] for t in request.tools],
            tools_sha256=hashlib.sha256(tools_json.encode()).hexdigest(),
        )


def _with_cache_breakpoint(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A copy of the history whose last block carries `cache_control` (history stays clean)."""
    if not messages:
        return []
    last = copy.deepcopy(messages[-1])
    content = last["content"]
    if content:
        content[-1] = {**content[-1], "cache_control": dict(CACHE_CONTROL)}
    return [*messages[:-1], last]
