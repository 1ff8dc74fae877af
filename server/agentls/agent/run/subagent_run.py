"""Running a sub-agent: a conversation of its own inside one `task` call of a session.

The sub-agent gets its own history (so the session's context stays small: only its final
report comes back, as the `task` call's result), its own system prompt and the tools its
type allows, and shares everything that makes it part of the session:

- the session's staged changeset and edit sink: its edits are the session's, reviewed and
  delivered with them;
- the permission policy and hooks: its calls take the same pipeline, and an approval prompt
  reaches the user like the session's own (with the session's id);
- the run's cancel event: cancelling the run stops the sub-agent as fast as the run;
- accounting: every response it gets is added to the session's (and the run's) usage.

Its steps reach the user as the session's events, their summaries prefixed with the type
("explore: Reading src/app.py") and marked with the `task` call's id. Its transcript is a
file of its own next to the session's (`<session>.agents/<tool_use_id>.jsonl`), named in
the session's transcript by `subagent_start` / `subagent_end` records, so `agentls
transcript` shows it under the call that launched it.
"""

from __future__ import annotations

import asyncio
import re
import uuid
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from agentls.agent.claude.subagents import SubagentRole, withheld_from_readers
from agentls.agent.framework.controls import SubagentReport
from agentls.agent.framework.registry import PoolFilter
from agentls.agent.protocol.events import (
    AgentEvent,
    EventSink,
    Notice,
    Retrying,
    ToolFinished,
    ToolStarted,
)
from agentls.agent.protocol.messages import TextBlockParam
from agentls.agent.protocol.results import RunResult
from agentls.agent.run.conversation import Conversation, SessionConfig
from agentls.agent.run.prompts import build_system_prompt
from agentls.errors import ToolError

if TYPE_CHECKING:
    from collections.abc import Callable

    from agentls.agent.claude.subagents import AgentType
    from agentls.agent.framework.context import RunMode, ToolContext
    from agentls.agent.hooks.runner import HookOutcome

SUBAGENT_INTRO = """You are a sub-agent of agentls, a coding agent working inside the user's \
editor. The main agent handed you the task in the first message. Work on it on your own \
until it is done, then reply with a final report: that report is all the main agent sees of \
your work (the user does not see your messages), so make it complete and specific — what you \
found or changed, with file paths and line numbers. You cannot ask the user anything: where \
something is unclear, make the most reasonable assumption and say so in the report. Edits you \
make are staged in the user's session with the main agent's and reviewed by the user with \
them."""

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
WIND_DOWN_SECONDS = 0.4
"""How long a cancelled sub-agent may take to answer its open calls (the run's bound is
0.5 s)."""


def transcript_folder(session_transcript: Path) -> Path:
    """Where a session's sub-agent transcripts go (`<id>.agents` beside `<id>.jsonl`)."""
    return session_transcript.with_name(session_transcript.stem + ".agents")


def _child_id(tool_use_id: str, folder: Path) -> str:
    """A file name for the sub-agent's transcript: the call's id made safe (a call id comes
    from the endpoint and must not steer where files go), unique in the folder."""
    base = _UNSAFE.sub("_", tool_use_id)[:80].strip("_") or uuid.uuid4().hex[:12]
    name, n = base, 1
    while (folder / f"{name}.jsonl").exists():
        n += 1
        name = f"{base}-{n}"
    return name


def system_prompt(roots: list[Path], agent: AgentType, instructions: str) -> list[TextBlockParam]:
    """The sub-agent's own intro and its type's prompt, then the usual tool guidance."""
    role = agent.prompt.strip()
    intro = SUBAGENT_INTRO + (f"\n\n# Your role: {agent.name}\n{role}" if role else "")
    return build_system_prompt(roots, instructions, intro=intro)


class ChildLoop(Protocol):
    async def run(self, prompt: str) -> RunResult: ...


class ParentLoop(Protocol):
    """What a sub-agent's run needs of the run that starts it (`agent.run.loop.AgentLoop`; named
    here, not imported, so the loop and this module do not import each other)."""

    @property
    def subagent(self) -> SubagentRole | None: ...
    @property
    def conversation(self) -> Conversation: ...
    @property
    def mode(self) -> RunMode: ...
    @property
    def cancel(self) -> asyncio.Event: ...
    def _emit_safe(self, event: AgentEvent) -> None: ...
    def child(
        self,
        conversation: Conversation,
        events: EventSink,
        mode: RunMode,
        role: SubagentRole,
        cancel: asyncio.Event | None = None,
    ) -> ChildLoop: ...


async def run_subagent(
    parent: ParentLoop,
    agent: AgentType,
    description: str,
    prompt: str,
    ctx: ToolContext,
    cancel: asyncio.Event | None = None,
) -> SubagentReport:
    """Run `agent` on `prompt` to its end inside the call `ctx` is for. With `cancel` (a
    hook's verifier, `agentls.agent.hooks.model`) it stops on that event alone, and may run
    inside a sub-agent (for its SubagentStop hooks; verifiers start no hooks of their own
    kind, so this nests once)."""
    if parent.subagent is not None and cancel is None:
        raise ToolError("a sub-agent cannot start sub-agents of its own")
    session = parent.conversation
    mode = parent.mode
    tools = agent.select_tools(list(session.pool(mode)))
    model, model_note = agent.model_for(session.settings.model)
    folder = transcript_folder(session.transcript.path)
    config = SessionConfig(
        settings=session.settings.model_copy(update={"model": model}),
        workspace=session.config.workspace,
        tools=tools,
        permissions=session.config.permissions,
        hooks=session.config.hooks,
        edits=session.config.edits,
        pool_filter=_pool_filter(agent, session.config.pool_filter),
        tool_search=session.config.tool_search,
        instructions=session.config.instructions,
        transcript_dir=folder,
        persist=False,
        pin_instruction_files=agent.pin_instructions,
        services=ctx.services,  # the same services as the `task` call that starts it
    )
    child = Conversation(session.client, config, _child_id(ctx.tool_use_id, folder))
    child.system = system_prompt(list(config.workspace.roots), agent, config.instructions)
    child.changes = session.changes
    child.accounting.parent = session.accounting
    child.first_prompt = child.last_prompt = prompt
    child.runs = 1
    child.accounting.start_run()
    child.status = "running"
    child.transcript.write(
        "subagent",
        agent=agent.name,
        description=description,
        session_id=session.id,
        parent_tool_use_id=ctx.tool_use_id,
        model=model,
        tools=child.pool(mode).names,
    )
    session.transcript.write(
        "subagent_start",
        tool_use_id=ctx.tool_use_id,
        agent=agent.name,
        description=description,
        model=model,
        transcript=str(child.transcript.path),
    )
    events = _SubagentEvents(parent._emit_safe, agent.name, ctx.session_id, ctx.tool_use_id)
    if model_note:
        events(Notice(ctx.session_id, model_note))
    missing = agent.missing_tools(list(session.pool(mode)))
    if missing:
        events(
            Notice(
                ctx.session_id,
                f"sub-agent type {agent.name!r} asks for tools that are not offered here: "
                f"{', '.join(missing)}; it runs without them",
            )
        )
    prompt = await _subagent_start(session.config.hooks, ctx, agent, child.id, prompt, events)
    role = SubagentRole(agent, ctx.session_id, ctx.tool_use_id)
    loop = parent.child(child, events, mode, role, cancel)
    running = asyncio.ensure_future(loop.run(prompt))
    result: RunResult | None = None
    try:
        result = await asyncio.shield(running)
    except asyncio.CancelledError:
        result = await _wind_down(cancel or parent.cancel, running)
        raise
    finally:
        _finish(session, child, ctx, agent, result)
    return SubagentReport(
        agent.name,
        result.status,
        result.text,
        result.turns,
        result.tally,
        child.transcript.path,
        result.error,
    )


async def _subagent_start(
    hooks: object,
    ctx: ToolContext,
    agent: AgentType,
    agent_id: str,
    prompt: str,
    events: Callable[[AgentEvent], None],
) -> str:
    """SubagentStart hooks: their context goes to the sub-agent with its prompt."""
    start = getattr(hooks, "subagent_start", None)
    if not callable(start):
        return prompt
    try:
        outcome: HookOutcome = await start(ctx, agent_type=agent.name, agent_id=agent_id)
    except Exception as exc:
        events(Notice(ctx.session_id, f"SubagentStart hooks failed: {exc}"))
        return prompt
    if outcome.system_message:
        events(Notice(ctx.session_id, outcome.system_message))
    if outcome.additional_context:
        return f"{prompt}\n\n{outcome.additional_context}"
    return prompt


async def _wind_down(cancel: asyncio.Event, running: asyncio.Future[RunResult]) -> RunResult | None:
    """The `task` call is being torn down: the run is going down. The sub-agent shares the
    run's cancel event, so it stops at once on its own — answering every call it made, so
    its history stays whole; it gets `WIND_DOWN_SECONDS` for that, then it is cancelled."""
    cancel.set()
    try:
        return await asyncio.wait_for(asyncio.shield(running), WIND_DOWN_SECONDS)
    except (TimeoutError, asyncio.CancelledError):
        running.cancel()
        return None
    except Exception:
        return None


def _finish(
    session: Conversation,
    child: Conversation,
    ctx: ToolContext,
    agent: AgentType,
    result: RunResult | None,
) -> None:
    """Close the sub-agent's books (also when its task is torn down mid-run)."""
    tally = child.accounting.end_run()
    child.status = result.status if result is not None else "cancelled"
    session.transcript.write(
        "subagent_end",
        tool_use_id=ctx.tool_use_id,
        agent=agent.name,
        status=child.status,
        turns=result.turns if result is not None else child.turns,
        usage=tally.usage.to_dict(),
        cost_usd=tally.cost_usd,
        error=result.error if result is not None else None,
        transcript=str(child.transcript.path),
    )
    child.transcript.close()


class _SubagentEvents:
    """The sub-agent's events as the session's: its tool steps (prefixed with its type and
    marked with the `task` call) and notices; its text, usage and run boundaries stay in
    its transcript (the `task` call's own events frame it)."""

    def __init__(self, emit: EventSink, agent: str, session_id: str, call_id: str) -> None:
        self.emit = emit
        self.agent = agent
        self.session_id = session_id
        self.call_id = call_id

    def __call__(self, event: AgentEvent) -> None:
        if isinstance(event, ToolStarted):
            self.emit(
                replace(
                    event,
                    session_id=self.session_id,
                    summary=f"{self.agent}: {event.summary}",
                    parent_tool_use_id=self.call_id,
                )
            )
        elif isinstance(event, ToolFinished):
            self.emit(replace(event, session_id=self.session_id, parent_tool_use_id=self.call_id))
        elif isinstance(event, Notice):
            self.emit(Notice(self.session_id, f"{self.agent}: {event.message}"))
        elif isinstance(event, Retrying):
            self.emit(replace(event, session_id=self.session_id))


def _pool_filter(agent: AgentType, parent: PoolFilter) -> PoolFilter:
    """The parent's blanket denials; a read-only type also loses what executes or reaches
    the network, in the pool and among the tools it may discover later."""
    if not agent.read_only_tools:
        return PoolFilter(read_only=False, denied=parent.denied)
    denied = parent.denied
    return PoolFilter(
        read_only=True, denied=lambda name: denied(name) or withheld_from_readers(name)
    )
