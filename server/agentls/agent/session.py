"""`AgentSession`: one conversation with the model, continued by follow-up prompts.

Holds the message history, usage and cost totals, the session's staged changeset and its
transcript. One run at a time; `run()` drives the loop in `agentls.agent.loop`.

Persistence: with `SessionConfig.persist` (the default) the session writes its state file
(`agentls.agent.store`) at every status change and after every run and compaction;
`AgentSession.restore` / `SessionStore.resume` continue it after a restart. Context
management (`agentls.agent.compaction`): requests are checked against the model's context
window before they are sent and the history is compacted when it would not fit.
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import json
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentls.agent import compaction as cx
from agentls.agent.context import EditSink, KeepStaged, RunMode, ToolContext
from agentls.agent.events import EventSink, RunStatus, ignore_event
from agentls.agent.hooks import HookRunner, NoHooks
from agentls.agent.model_client import (
    ModelClient,
    ModelRequest,
    ModelResponse,
    count_request_tokens,
)
from agentls.agent.permissions import AllowAll, PermissionPolicy
from agentls.agent.pricing import CostEstimate, PriceTable
from agentls.agent.prompts import build_system_prompt, deferred_tools_reminder, one_line
from agentls.agent.registry import (
    CACHE_CONTROL,
    AnyTool,
    PoolFilter,
    ToolPool,
    ToolSearchSettings,
    ToolSource,
    discovered_tool_names,
)
from agentls.agent.settings import AgentSettings
from agentls.agent.store import SessionState, SessionStateError, SessionStore
from agentls.agent.transcript import TranscriptWriter, transcript_dir
from agentls.agent.usage import Usage
from agentls.workspace import ChangeSet, Workspace

log = logging.getLogger(__name__)


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
    cost_usd: float | None = None
    cost_note: str | None = None
    compactions: int = 0

    def to_dict(self) -> dict[str, Any]:
        usage: dict[str, Any] = {**self.usage.to_dict(), "cost_usd": self.cost_usd}
        if self.cost_note:
            usage["cost_note"] = self.cost_note
        result: dict[str, Any] = {
            "session": self.session_id,
            "status": self.status,
            "text": self.text,
            "usage": usage,
            "turns": self.turns,
            "transcript": self.transcript.as_uri(),
        }
        if self.error:
            result["error"] = self.error
        if self.notices:
            result["notices"] = list(self.notices)
        if self.compactions:
            result["compactions"] = self.compactions
        return result


@dataclass
class SessionConfig:
    """Everything a host decides about a session; the defaults suit tests and scripts."""

    settings: AgentSettings
    workspace: Workspace
    tools: Sequence[AnyTool] = ()
    external_tools: Sequence[AnyTool] = ()
    tool_sources: Sequence[ToolSource] = ()
    """Asynchronous tool providers (e.g. `agentls.mcp.McpManager`), awaited before the first run."""
    tool_search: ToolSearchSettings = field(default_factory=ToolSearchSettings)
    permissions: PermissionPolicy = field(default_factory=AllowAll)
    hooks: HookRunner = field(default_factory=NoHooks)
    edits: EditSink = field(default_factory=KeepStaged)
    """Where write tools hand staged edits as they happen (the host delivers in auto mode)."""
    pool_filter: PoolFilter = field(default_factory=PoolFilter)
    instructions: str = ""
    """Extra instructions for the system prompt (editor settings); the workspace's
    instruction files are pinned separately (see `pin_instruction_files`)."""
    transcript_dir: Path | None = None
    persist: bool = True
    """Write the state file (`<transcript_dir>/<id>.state.json`) so the session can resume."""
    pin_instruction_files: bool = True
    """Put AGENTS.md / CLAUDE.md / .agentls/instructions.md at the start of the history (and
    re-pin them after every compaction)."""


Summarizer = Callable[[ModelRequest], Awaitable[ModelResponse]]
"""Sends the summary request of a compaction (the loop passes one with retries)."""


class AgentSession:
    def __init__(
        self,
        client: ModelClient,
        config: SessionConfig,
        session_id: str | None = None,
        *,
        _state: SessionState | None = None,
    ):
        self.id = _state.id if _state else session_id or uuid.uuid4().hex[:12]
        self.client = client
        self.config = config
        self.settings = config.settings
        self.messages: list[dict[str, Any]] = []
        self.usage = Usage()
        self.cost_usd: float | None = 0.0
        self.cost_note: str | None = None
        self.prices = PriceTable(self.settings.prices)
        self.turns = 0
        self.runs = 0
        self.status: str = "idle"
        self.created = time.time()
        self.first_prompt = ""
        self.last_prompt = ""
        self.changes = ChangeSet()
        self.system = build_system_prompt(config.workspace.roots, config.instructions)
        self.discovered: set[str] = set()
        """Deferred tools loaded by `tool_search`; kept across compactions (the history
        that proved them may be summarised away)."""
        self.compactions = 0
        self.stub_boundary = 0
        self.estimator = cx.TokenEstimator()
        self.last_input_tokens: int | None = None
        self.last_compaction: cx.CompactionResult | None = None
        self.lost_staged: list[str] = []
        self.store = SessionStore(config.transcript_dir) if config.persist else None
        self._pools: dict[bool, ToolPool] = {}
        self._source_tools: list[AnyTool] | None = None
        self._cancel: asyncio.Event | None = None
        self._compacting = False
        folder = config.transcript_dir or transcript_dir()
        self.transcript = TranscriptWriter(folder / f"{self.id}.jsonl")
        if _state is not None:
            self._apply_state(_state)
            return
        self.transcript.write(
            "session",
            session_id=self.id,
            model=self.settings.model,
            workspace=[str(r) for r in config.workspace.roots],
            tools=self.pool("review").names,
        )

    @classmethod
    def restore(
        cls, client: ModelClient, config: SessionConfig, state: SessionState
    ) -> AgentSession:
        """Continue a saved session (`SessionStore.load`) with this host's tools and client.

        History, usage, cost, discovered deferred tools and context bookkeeping come back;
        the staged changeset does not (see `agentls.agent.store`): the model is told at the
        next prompt which staged edits were lost.
        """
        return cls(client, config, _state=state)

    def _apply_state(self, state: SessionState) -> None:
        self.messages = [dict(m) for m in state.messages]
        self.usage = Usage(**{k: v for k, v in state.usage.items() if k in Usage().to_dict()})
        self.cost_usd, self.cost_note = state.cost_usd, state.cost_note
        self.turns, self.runs = state.turns, state.runs
        self.created, self.first_prompt = state.created, state.first_prompt
        self.last_prompt = state.last_prompt
        self.discovered = set(state.discovered_tools)
        self.compactions, self.stub_boundary = state.compactions, state.stub_boundary
        self.estimator.ratio = state.token_ratio
        self.last_input_tokens = state.last_input_tokens
        self.lost_staged = list(state.staged_paths)
        # a run that was in flight when the server stopped did not finish
        self.status = "interrupted" if state.status in ("running", "compacting") else state.status
        self.transcript.write(
            "resume",
            session_id=self.id,
            model=self.settings.model,
            previous_model=state.model,
            workspace=[str(r) for r in self.config.workspace.roots],
            previous_workspace=state.workspace,
            messages=len(self.messages),
            discovered_tools=sorted(self.discovered),
            lost_staged=self.lost_staged,
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
            external = [*self.config.external_tools, *(self._source_tools or ())]
            self._pools[read_only] = ToolPool.assemble(
                self.config.tools, external, flt, self.config.tool_search
            )
        return self._pools[read_only]

    async def load_tool_sources(self) -> None:
        """Await the tool sources once (this is what starts lazy MCP servers).

        A failing source is logged and contributes nothing; the run goes on with the rest.
        Afterwards the pools are rebuilt and stay fixed for the session, so the `tools` array
        stays byte-stable; servers that come up later serve new sessions.
        """
        if self._source_tools is not None or not self.config.tool_sources:
            return
        loaded: list[AnyTool] = []
        results = await asyncio.gather(
            *(source.tools() for source in self.config.tool_sources), return_exceptions=True
        )
        for source, result in zip(self.config.tool_sources, results, strict=True):
            if isinstance(result, BaseException):
                if isinstance(result, asyncio.CancelledError):
                    raise result
                log.error("tool source %r failed: %s", source, result)
                continue
            loaded.extend(result)
        self._source_tools = loaded
        self._pools.clear()
        self.transcript.write("tools", tools=self.pool("review").names)

    def tool_context(self, mode: RunMode, cancelled: asyncio.Event) -> ToolContext:
        return ToolContext(
            session_id=self.id,
            workspace=self.config.workspace,
            changes=self.changes,
            mode=mode,
            cancelled=cancelled,
            edits=self.config.edits,
        )

    async def run(
        self, prompt: str, *, events: EventSink = ignore_event, mode: RunMode = "review"
    ) -> RunResult:
        """Run the agent on a prompt (a follow-up if the session already has history)."""
        from agentls.agent.loop import AgentLoop

        if self._cancel is not None or self._compacting:
            raise SessionBusy(f"session {self.id} is already running; cancel it or wait")
        self._cancel = asyncio.Event()
        if not self.first_prompt:
            self.first_prompt = prompt
        self.last_prompt = prompt
        self.set_status("running")
        try:
            await self.load_tool_sources()
            result = await AgentLoop(self, events, mode, self._cancel).run(prompt)
        finally:
            self._cancel = None
        self.set_status(result.status)
        return result

    # --- persistence, status and cost -------------------------------------------------------

    def set_status(self, status: str) -> None:
        self.status = status
        self.persist()

    def state(self) -> SessionState:
        """What the store writes (no credentials: settings are not part of it)."""
        return SessionState(
            id=self.id,
            created=self.created,
            updated=time.time(),
            workspace=[str(r) for r in self.config.workspace.roots],
            model=self.settings.model,
            first_prompt=self.first_prompt,
            last_prompt=self.last_prompt,
            status=self.status,
            runs=self.runs,
            turns=self.turns,
            usage=self.usage.to_dict(),
            cost_usd=self.cost_usd,
            cost_note=self.cost_note,
            messages=self.messages,
            discovered_tools=sorted(self.discovered),
            staged_paths=[str(p) for p in self.changes.changed_paths()] or self.lost_staged,
            compactions=self.compactions,
            stub_boundary=self.stub_boundary,
            token_ratio=self.estimator.ratio,
            last_input_tokens=self.last_input_tokens,
            transcript=str(self.transcript.path),
        )

    def persist(self) -> Path | None:
        """Write the state file now; a failure is logged (the transcript still has it all)."""
        if self.store is None:
            return None
        try:
            return self.store.save(self.state())
        except (OSError, SessionStateError, TypeError, ValueError):
            log.exception("cannot save the state of session %s", self.id)
            return None

    def add_usage(self, model: str, usage: Usage) -> CostEstimate:
        """Count one response's tokens and cost (priced by the model that answered)."""
        self.usage.add(usage)
        cost = self.prices.cost(model or self.settings.model, usage)
        if cost.usd is None:
            self.cost_usd, self.cost_note = None, cost.note
        elif self.cost_usd is not None:
            self.cost_usd = round(self.cost_usd + cost.usd, 6)
        return cost

    def context_window(self) -> int:
        return cx.context_window_for(self.settings.model, self.settings.context_window)

    def status_dict(self) -> dict[str, Any]:
        """For `agentls.status`: one session's figures (the CLI reads `usage.cost_usd`)."""
        usage: dict[str, Any] = {**self.usage.to_dict(), "cost_usd": self.cost_usd}
        if self.cost_note:
            usage["cost_note"] = self.cost_note
        window = self.context_window()
        used = self.last_input_tokens
        return {
            "id": self.id,
            "status": self.status,
            "running": self.running,
            "turns": self.turns,
            "runs": self.runs,
            "usage": usage,
            "context": {
                "window": window,
                "last_input_tokens": used,
                "share": round(used / window, 4) if used else None,
                "compact_threshold": self.settings.compact_threshold,
                "compactions": self.compactions,
            },
            "model": self.settings.model,
            "created": self.created,
            "first_prompt": self.first_prompt,
            "staged": [str(p) for p in self.changes.changed_paths()],
            "transcript": self.transcript.path.as_uri(),
            "state_file": self.store.path(self.id).as_uri() if self.store else None,
        }

    # --- context management ---------------------------------------------------------------

    def initial_context(self) -> list[dict[str, Any]]:
        """Blocks that go before the user's prompt: the pinned instruction files on a new
        session's first prompt; after a resume, a note about staged edits that were lost."""
        blocks: list[dict[str, Any]] = []
        if not self.messages and self.config.pin_instruction_files:
            block = cx.instructions_block(cx.load_instruction_files(self.config.workspace.roots))
            if block is not None:
                blocks.append(block)
        if self.lost_staged:
            paths = "\n".join(f"- {p}" for p in self.lost_staged)
            blocks.append(
                {
                    "type": "text",
                    "text": "<system-reminder>This session was resumed after the server "
                    "restarted. Edits you had staged but the user had not accepted were lost "
                    f"and are not in the files now:\n{paths}\nRe-read those files and redo "
                    "the edits if they are still needed.</system-reminder>",
                }
            )
            self.lost_staged = []
        return blocks

    def observe_input_tokens(self, request: ModelRequest, usage: Usage) -> None:
        """Calibrate the estimator by what the API billed for the request just sent."""
        actual = (
            usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens
        )
        if actual > 0:
            self.last_input_tokens = actual
            self.estimator.observe(_counted_part(request), actual)

    async def request_tokens(self, request: ModelRequest, *, exact: bool = True) -> int:
        """Input tokens of a request: the endpoint's count when it has one, else estimated."""
        if exact:
            counted = await count_request_tokens(self.client, request)
            if counted is not None:
                return counted
        return self.estimator.estimate(_counted_part(request))

    def compaction_limit(self) -> int:
        return int(self.context_window() * self.settings.compact_threshold)

    async def needs_compaction(self, request: ModelRequest) -> tuple[bool, int]:
        """Whether `request` would exceed the threshold (and its token figure).

        The calibrated estimate decides when the request is clearly below (most turns, no
        extra API call); near or above the limit the endpoint's count decides.
        """
        limit = self.compaction_limit()
        estimate = self.estimator.estimate(_counted_part(request))
        if estimate < limit * 0.75:
            return False, estimate
        tokens = await self.request_tokens(request)
        return tokens > limit, tokens

    async def compact(
        self,
        reason: str = "manual",
        *,
        summarize: Summarizer | None = None,
        mode: RunMode = "review",
        tokens_before: int | None = None,
    ) -> cx.CompactionResult:
        """Summarise older turns, keep the last ones, re-pin instructions and staged edits.

        `CompactionError` when there is nothing to summarise or the summary request failed
        (the history is then unchanged). Manual compaction of a running session raises
        `SessionBusy`; the loop compacts between turns on its own.
        """
        if self._compacting or (reason == "manual" and self._cancel is not None):
            raise SessionBusy(f"session {self.id} is busy; compact it when the run ends")
        self._compacting = True
        try:
            return await self._compact(reason, summarize, mode, tokens_before)
        finally:
            self._compacting = False

    async def _compact(
        self,
        reason: str,
        summarize: Summarizer | None,
        mode: RunMode,
        tokens_before: int | None,
    ) -> cx.CompactionResult:
        old, kept = cx.split_history(self.messages, self.settings.compact_keep_turns)
        if not old or not cx.assistant_indices(old):
            raise cx.CompactionError("nothing to compact yet: the history has no earlier turns")
        pool = self.pool(mode)
        before = tokens_before or await self.request_tokens(self.build_request(pool))
        limit_chars = int(self.context_window() * cx.SUMMARY_INPUT_SHARE * cx.CHARS_PER_TOKEN)
        request = ModelRequest(
            model=self.settings.model,
            max_tokens=min(self.settings.max_tokens, self.settings.compact_summary_tokens),
            system=[{"type": "text", "text": cx.SUMMARY_SYSTEM}],
            tools=[],
            messages=cx.summary_request_messages(cx.render_for_summary(old, limit_chars)),
            temperature=self.settings.temperature,
        )
        self.transcript.write("compaction_start", reason=reason, tokens=before)
        from agentls.agent.model_client import ModelError

        try:
            response = await (summarize or self._summarize)(request)
        except ModelError as exc:
            self.transcript.write("compaction_failed", reason=reason, error=str(exc))
            raise cx.CompactionError(f"the summary request failed: {exc}") from exc
        self.add_usage(response.model, response.usage)
        self.transcript.write(
            "usage", turn=self.turns, usage=response.usage.to_dict(), purpose="compaction"
        )
        summary = "".join(
            str(b.get("text", "")) for b in response.content if b.get("type") == "text"
        ).strip()
        self.discovered |= discovered_tool_names(self.messages)
        files = cx.load_instruction_files(self.config.workspace.roots)
        pinned = [
            b
            for b in (
                cx.instructions_block(files) if self.config.pin_instruction_files else None,
                cx.staged_edits_block(self.changes),
            )
            if b is not None
        ]
        latest = self.last_prompt if not cx.user_prompts(kept) else None
        self.compactions += 1
        pinned.append(cx.summary_block(summary, cx.files_touched(old), latest, self.compactions))
        messages_before = len(self.messages)
        self.messages = cx.compacted_history(pinned, kept)
        self.stub_boundary = 0
        after = await self.request_tokens(self.build_request(pool))
        result = cx.CompactionResult(
            reason=reason,
            before_tokens=before,
            after_tokens=after,
            messages_before=messages_before,
            messages_after=len(self.messages),
            summarized_messages=len(old),
            kept_turns=len(cx.assistant_indices(kept)),
            instruction_files=[str(p) for p, _ in files],
            staged_paths=[str(p) for p in self.changes.changed_paths()],
            summary=summary,
        )
        self.last_compaction = result
        self.transcript.write("compaction", **result.to_dict(), messages=self.messages)
        self.persist()
        return result

    async def _summarize(self, request: ModelRequest) -> ModelResponse:
        return await self.client.stream(request, _ignore_text)

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
        """The next request: cache breakpoints on tools, system and the latest message.

        Deferred tools loaded by `tool_search` calls in the history join the `tools` array
        (and become callable: the pipeline asks the pool); the deferred-tools reminder
        follows the cached system block.
        """
        self.discovered |= discovered_tool_names(self.messages)
        pool.set_discovered(self.discovered)
        return ModelRequest(
            model=self.settings.model,
            max_tokens=self.settings.max_tokens,
            system=self._system_for(pool),
            tools=pool.api_tools(),
            messages=_with_cache_breakpoint(self.request_messages()),
            temperature=self.settings.temperature,
        )

    def request_messages(self) -> list[dict[str, Any]]:
        """The history as sent: large tool results before the stub boundary are stubbed
        (the boundary moves step-wise; see `agentls.agent.compaction`)."""
        total = len(cx.assistant_indices(self.messages))
        self.stub_boundary = cx.next_stub_boundary(
            self.stub_boundary, total, self.settings.stub_after_turns
        )
        return cx.stub_old_results(self.messages, self.stub_boundary, self.settings.stub_min_chars)

    def _system_for(self, pool: ToolPool) -> list[dict[str, Any]]:
        if not pool.deferred:
            return self.system
        hints = [(t.name, one_line(t.description())) for t in pool.deferred_tools]
        text = deferred_tools_reminder(hints, server_side=pool.search.server_side)
        return [*self.system, {"type": "text", "text": text}]

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


def _ignore_text(text: str) -> None:
    del text


def _counted_part(request: ModelRequest) -> dict[str, Any]:
    return {"system": request.system, "tools": request.tools, "messages": request.messages}


def _with_cache_breakpoint(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A copy of the history whose last block carries `cache_control` (history stays clean)."""
    if not messages:
        return []
    last = copy.deepcopy(messages[-1])
    content = last["content"]
    if content:
        content[-1] = {**content[-1], "cache_control": dict(CACHE_CONTROL)}
    return [*messages[:-1], last]
