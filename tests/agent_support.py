"""Test tools and a session factory for driving the real loop against the scripted API."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

from agentls.agent.framework.context import ToolContext
from agentls.agent.framework.tool import Tool, ToolError, ToolInput
from agentls.agent.protocol.events import AgentEvent
from agentls.agent.run.model_client import AnthropicModelClient
from agentls.agent.run.session import AgentSession, SessionConfig
from agentls.agent.settings import AgentSettings
from agentls.config.loop import ToolsSettings
from agentls.testing import ScriptedMessagesServer
from agentls.workspace import Workspace


class ProbeInput(ToolInput):
    label: str
    delay: float = 0.0


class ProbeRead(Tool[ProbeInput]):
    """Read-only, parallel: sleeps `delay` then echoes its label."""

    name = "probe_read"
    aliases = ("probe_alias",)
    usage = "Reads nothing; echoes `label` after `delay` seconds. For tests."
    input_model = ProbeInput

    def is_read_only(self, input: ProbeInput | None = None) -> bool:
        return True

    def is_concurrency_safe(self, input: ProbeInput) -> bool:
        return True

    def summary(self, input: ProbeInput) -> str:
        return f"Probing {input.label}"

    async def call(self, input: ProbeInput, ctx: ToolContext) -> str:
        await asyncio.sleep(input.delay)
        return f"read:{input.label}"


class ProbeWrite(Tool[ProbeInput]):
    """A write (defaults: not read-only, not parallel)."""

    name = "probe_write"
    usage = "Pretends to write; echoes `label` after `delay` seconds. For tests."
    input_model = ProbeInput

    async def call(self, input: ProbeInput, ctx: ToolContext) -> str:
        await asyncio.sleep(input.delay)
        return f"wrote:{input.label}"


class Boom(Tool[ProbeInput]):
    name = "boom"
    usage = "Always raises. For tests."
    input_model = ProbeInput

    async def call(self, input: ProbeInput, ctx: ToolContext) -> str:
        raise RuntimeError(f"kaboom {input.label}")


class Picky(Tool[ProbeInput]):
    """Rejects labels that are not lower case (validate_input), and refuses 'secret'."""

    name = "picky"
    usage = "Accepts only lower-case labels. For tests."
    input_model = ProbeInput

    def is_read_only(self, input: ProbeInput | None = None) -> bool:
        return True

    async def validate_input(self, input: ProbeInput, ctx: ToolContext) -> str | None:
        if input.label != input.label.lower():
            return f"label must be lower case; try {input.label.lower()!r}"
        return None

    async def call(self, input: ProbeInput, ctx: ToolContext) -> str:
        if input.label == "missing":
            raise ToolError("no such thing: 'missing'; did you mean 'mission'?")
        return f"picky:{input.label}"


class Huge(Tool[ProbeInput]):
    name = "huge"
    usage = "Returns a very long text. For tests."
    input_model = ProbeInput
    max_result_chars = 1000

    def is_read_only(self, input: ProbeInput | None = None) -> bool:
        return True

    async def call(self, input: ProbeInput, ctx: ToolContext) -> dict[str, Any]:
        return {"data": "x" * 5000}


def all_test_tools() -> list[Tool[Any]]:
    return [ProbeRead(), ProbeWrite(), Boom(), Picky(), Huge()]


def make_session(
    server: ScriptedMessagesServer,
    tmp_path: Path,
    tools: Sequence[Tool[Any]] | None = None,
    **settings: Any,
) -> AgentSession:
    # the full tool profile, whatever the context window: scenarios with small windows (to
    # reach compaction) call test tools that the compact profile would not offer
    values: dict[str, Any] = {
        "retry_base_delay": 0.01,
        "retry_max_delay": 0.05,
        "tools": ToolsSettings(profile="full"),
    }
    values.update(settings)
    config = SessionConfig(
        settings=AgentSettings.from_env(
            {
                "ANTHROPIC_API_KEY": "test-key",
                "ANTHROPIC_BASE_URL": server.base_url,
                "AGENTLS_READ_BEFORE_EDIT": "0",  # older scenarios edit without a read
            },
            **values,
        ),
        workspace=Workspace([tmp_path]),
        tools=all_test_tools() if tools is None else tools,
        transcript_dir=tmp_path / "transcripts",
    )
    return close_at_loop_end(AgentSession(AnthropicModelClient(config.settings), config))


_closers: set[asyncio.Task[None]] = set()
Closable = TypeVar("Closable", AgentSession, AnthropicModelClient)


def close_at_loop_end(resource: Closable) -> Closable:
    """Close `resource` (a session, a model client) when the test's event loop ends.

    Tests drop their sessions without closing them; pytest-asyncio's runner cancels the
    tasks left when the test ends, and this one's cancellation closes the HTTP connections
    and transcript file (left open, they are ResourceWarnings — errors here).
    """
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # a synchronous test: it closes what it opens itself
        return resource
    close = resource.aclose if isinstance(resource, AgentSession) else resource.close

    async def wait_then_close() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            _closers.discard(task)
            await close()

    task = loop.create_task(wait_then_close())
    _closers.add(task)
    return resource


def close_left_open() -> None:
    """Close what `close_at_loop_end` holds on loops that outlive the test (module-scoped
    ones), so a test's connections do not outlast it (conftest calls it after each test)."""
    for task in list(_closers):
        loop = task.get_loop()
        if loop.is_closed() or loop.is_running():
            continue
        task.cancel()
        loop.run_until_complete(asyncio.gather(task, return_exceptions=True))


class EventLog(list[AgentEvent]):
    """Collects events; helpers to filter by type."""

    def __call__(self, event: AgentEvent) -> None:
        self.append(event)

    def of(self, kind: str) -> list[Any]:
        return [e for e in self if e.type == kind]
