"""`Conversation`: a session's state — history, counters, staged edits, tools, transcript.

The layers around it: the loop (`agentls.agent.run.loop`) runs a conversation, the compactor
(`agentls.agent.run.context_window`) shrinks its history, accounting
(`agentls.agent.protocol.accounting`) counts its tokens and cost, and
`agentls.agent.run.session.AgentSession` ties them together and persists them through
`agentls.agent.persistence.store`. None of those is imported here, so the state knows
nothing of how it is run or saved: it only calls `on_change` when it changed enough to be
saved (the session persists then).
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import logging
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from agentls.agent.framework import todos as todo_list
from agentls.agent.framework.context import EditSink, KeepStaged, RunMode, ToolContext
from agentls.agent.framework.questions import UserPrompts
from agentls.agent.framework.reads import ReadLog
from agentls.agent.framework.registry import (
    AnyTool,
    PoolFilter,
    ToolPool,
    ToolSearchSettings,
    ToolSource,
    discovered_tool_names,
    load_sources,
    source_instructions,
)
from agentls.agent.framework.services import ToolServices
from agentls.agent.framework.todos import TodoItem
from agentls.agent.framework.tool import one_line
from agentls.agent.framework.tool_profile import COMPACT_TOOLS, pick_profile
from agentls.agent.hooks.runner import HookRunner, NoHooks
from agentls.agent.permissions.approval import AllowAll, PermissionPolicy
from agentls.agent.permissions.guards import call_subject
from agentls.agent.persistence import journal, rewind, staged
from agentls.agent.persistence.state import SessionState
from agentls.agent.persistence.transcript import TranscriptWriter, transcript_dir
from agentls.agent.protocol.accounting import Accounting, Tally
from agentls.agent.protocol.messages import (
    ContentBlockParam,
    History,
    TextBlockParam,
    ToolUnionParam,
    add_user_blocks,
    assistant_message,
    text_block,
    with_cache_breakpoint,
)
from agentls.agent.protocol.pricing import PriceTable, is_anthropic_endpoint
from agentls.agent.protocol.results import RewindPayload, SessionStatusPayload, TurnPayload
from agentls.agent.protocol.usage import Usage
from agentls.agent.run import compaction as cx
from agentls.agent.run.mentions import shown_as_read
from agentls.agent.run.model_client import ModelClient, ModelRequest
from agentls.agent.run.overview import overview_budget, workspace_overview
from agentls.agent.run.prompts import (
    build_system_prompt,
    deferred_tools_reminder,
    environment_section,
)
from agentls.agent.settings import AgentSettings
from agentls.errors import SessionBusy
from agentls.workspace import ChangeSet, Workspace
from agentls.workspace.changes import ChangeEvent
from agentls.workspace.secrets import Redactor

log = logging.getLogger(__name__)


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
    skills: str = ""
    """The system prompt's list of skills (`SkillCatalog.prompt_section()`), fixed for the
    session so the prompt stays byte-stable."""
    pin_instruction_files: bool = True
    """Put AGENTS.md / CLAUDE.md / .agentls/instructions.md at the start of the history (and
    re-pin them after every compaction)."""
    prompts: UserPrompts | None = None
    """Where `ask_user_question` and the plan-mode tools ask the user (the host's port);
    None when nobody can be asked."""
    services: ToolServices | None = None
    """The workspace's typed services (the runtime's, through `AgentHost`), which the
    session's tools see as `ToolContext.services`; None: the defaults (tests, scripts)."""


def _nothing() -> None:
    return None


def _offered_names(config: SessionConfig) -> set[str]:
    """The tools the system prompt may name: those not removed by a deny rule."""
    denied = config.pool_filter.denied
    tools = [*config.tools, *config.external_tools]
    names = {t.name for t in tools if not denied(t.name) and t.is_enabled()}
    if _compact(config):
        builtin = {t.name for t in config.tools}
        names = {n for n in names if n in COMPACT_TOOLS or n not in builtin}
    return names


def _with_environment(messages: History, environment: str) -> History:
    """`messages` with `environment` (if any) as a reminder at the head of the first user
    message: byte-stable across turns, and kept when compaction rewrites the history."""
    if not environment or not messages or messages[0]["role"] != "user":
        return messages
    first = messages[0]
    content = first["content"]
    blocks = [text_block(content)] if isinstance(content, str) else list(content)
    note = text_block(f"<system-reminder>\n{environment}\n</system-reminder>")
    return [{**first, "content": [note, *blocks]}, *messages[1:]]


def _reads_text_calls(settings: AgentSettings) -> bool:
    if settings.tool_calls == "auto":
        return not is_anthropic_endpoint(settings.base_url)
    return settings.tool_calls == "text"


def _compact(config: SessionConfig) -> bool:
    """Whether the session offers the compact tool profile (a small, local model)."""
    window = cx.context_window_for(config.settings.model, config.settings.context_window)
    profile = config.settings.tools
    return pick_profile(profile.profile, window, profile.compact_below) == "compact"


class Conversation:
    """One conversation with the model: the state a session holds between and during runs."""

    def __init__(self, client: ModelClient, config: SessionConfig, session_id: str | None = None):
        self.id = session_id or uuid.uuid4().hex[:12]
        self.client = client
        self.config = config
        self.settings = config.settings
        self.messages: History = []
        self.accounting = Accounting(
            PriceTable(self.settings.prices, self.settings.base_url), self.settings.model
        )
        self.turns = 0
        self.runs = 0
        self.status: str = "idle"
        self.created = time.time()
        self.first_prompt = ""
        self.last_prompt = ""
        self.changes = ChangeSet()
        self.memory_seen: set[Path] | None = None
        """The memory files already in this session's context (`agent.run.memory`)."""
        self.changes.add_listener(self._changes_changed)
        self.changes_dirty = False
        """The changeset changed since the last checkpoint or save."""
        self.staging_count = 0
        """Changes to the staged edits so far (a run compares it to say it did something)."""
        local = _compact(config)
        offered = _offered_names(config)
        self.system_listings = (
            local and "write_file" in offered and _reads_text_calls(config.settings)
        )
        """Replies may rewrite a file as a whole-file listing (`FILE_LISTINGS`), and the
        files the prompt names are shown in that form."""
        self.system = build_system_prompt(
            config.workspace.roots,
            config.instructions,
            skills=config.skills,
            offered=offered,
            environment=not local,
            listings=self.system_listings,
        )
        self.listing_system = (
            build_system_prompt(
                config.workspace.roots,
                config.instructions,
                skills=config.skills,
                environment=False,
                listings=True,
                tools_section=False,
            )
            if self.system_listings
            else []
        )
        """The system prompt of a listing turn (`agentls.agent.run.listing_turn`): the
        listing format without the tools."""
        self.files_shown = False
        """The first message showed the files the prompt names as listings (compact
        profile): the run may start with a listing turn."""
        self.environment = environment_section(config.workspace.roots) if local else ""
        """The environment, sent at the head of the first message instead of in the system
        prompt for a compact-profile (local, small-context) model: chat templates such as
        Qwen's render the system text before the tools, so a workspace path or date in it
        would make a new folder or day re-read the whole tool list on a CPU."""
        self.discovered: set[str] = set()
        """Deferred tools loaded by `tool_search`; kept across compactions (the history
        that proved them may be summarised away)."""
        self.context = cx.ContextState()
        self.checkpoints: list[rewind.Checkpoint] = []
        """The end of each turn (prompt and run), for `rewind`."""
        self.turn_title = ""
        """The current turn's prompt as the user typed it (without the host's context)."""
        self.reminders: list[TextBlockParam] = []
        """Notes for the model, sent with the next prompt (e.g. after a restart)."""
        self.todos: list[TodoItem] = []
        """The agent's todo list (`todo_write`): saved, journaled, pinned on compaction."""
        self.todos_dirty = False
        """The todo list changed since the last checkpoint."""
        self.on_change: Callable[[], None] = _nothing
        """Called when the state changed enough to save it (status, compaction)."""
        self.on_staging: Callable[[ChangeEvent], None] = lambda event: None
        """Called after each change to the staged edits."""
        self._pools: dict[bool, ToolPool] = {}
        self._source_tools: list[AnyTool] | None = None
        self.source_instructions = ""
        """What the tool sources (MCP servers) ask to add to the system prompt; fixed when
        they are loaded, like the tools, so the prompt stays byte-stable."""
        self._cancel: asyncio.Event | None = None
        folder = config.transcript_dir or transcript_dir()
        self.transcript = TranscriptWriter(folder / f"{self.id}.jsonl")
        self.session_started = False
        self.reads = ReadLog()
        """Files read (or written) in this session: `edit_file`'s "read it first"."""
        """SessionStart hooks ran for this session object (`agentls.agent.run.loop`)."""

    async def aclose(self) -> None:
        """Release the model client's connections and the transcript file.

        A host calls it when it drops the session (shutdown); the session cannot run after.
        Sub-agents share their parent's client, so only a top-level session closes it.
        """
        try:
            await self.client.close()
        finally:
            self.transcript.close()

    # --- figures other layers read --------------------------------------------------------

    @property
    def usage(self) -> Usage:
        """The session's tokens so far (every run and compaction)."""
        return self.accounting.session.usage

    @property
    def cost_usd(self) -> float | None:
        return self.accounting.session.cost_usd

    @property
    def compactions(self) -> int:
        return self.context.compactions

    @property
    def running(self) -> bool:
        return self._cancel is not None

    def context_window(self) -> int:
        return cx.context_window_for(self.settings.model, self.settings.context_window)

    def compaction_limit(self) -> int:
        return int(self.context_window() * self.settings.compact_threshold)

    # --- tools ----------------------------------------------------------------------------

    def pool(self, mode: RunMode) -> ToolPool:
        """The session's pool for a mode; cached so its `tools` array stays byte-identical."""
        read_only = mode == "plan" or self.config.pool_filter.read_only
        if read_only not in self._pools:
            flt = PoolFilter(read_only=read_only, denied=self.config.pool_filter.denied)
            external = [*self.config.external_tools, *(self._source_tools or ())]
            self._pools[read_only] = ToolPool.assemble(
                self.config.tools,
                external,
                flt,
                self.config.tool_search,
                compact=self.compact_tools(),
            )
        return self._pools[read_only]

    def reads_text_calls(self) -> bool:
        """`model.toolCalls`: `text`, or `auto` on an endpoint that is not Anthropic's."""
        return _reads_text_calls(self.settings)

    def compact_tools(self) -> bool:
        """Whether the session offers the compact tool profile (`tools.profile`)."""
        tools = self.settings.tools
        window = self.context_window()
        return pick_profile(tools.profile, window, tools.compact_below) == "compact"

    async def load_tool_sources(self) -> None:
        """Await the tool sources once (this is what starts lazy MCP servers).

        A failing source is logged and contributes nothing; the run goes on with the rest.
        Afterwards the pools are rebuilt and stay fixed for the session, so the `tools` array
        stays byte-stable; servers that come up later serve new sessions.
        """
        if self._source_tools is not None or not self.config.tool_sources:
            return
        found = await load_sources(self.config.tool_sources)
        loaded = [tool for _, tools in found for tool in tools]
        self.source_instructions = source_instructions(found)
        self._source_tools = loaded
        self._pools.clear()
        self.transcript.write("tools", tools=self.pool("review").names)

    def tool_context(self, mode: RunMode, cancelled: asyncio.Event) -> ToolContext:
        if self.config.services is None:  # the defaults, made once for the session
            self.config.services = ToolServices(self.config.workspace)
        return ToolContext(
            services=self.config.services,
            session_id=self.id,
            workspace=self.config.workspace,
            changes=self.changes,
            mode=mode,
            cancelled=cancelled,
            edits=self.config.edits,
            reads=self.reads if self.settings.read_before_edit else None,
        )

    # --- runs, turns and status -----------------------------------------------------------

    def begin_run(self, prompt: str, title: str = "") -> asyncio.Event:
        """Mark a run as started (`SessionBusy` if one is); returns its cancel event."""
        if self._cancel is not None or self.context.compacting:
            raise SessionBusy(f"session {self.id} is already running; cancel it or wait")
        self._refresh_checkpoint()  # the last turn ends here: with the user's review
        self._cancel = asyncio.Event()
        if not self.first_prompt:
            self.first_prompt = prompt
        self.last_prompt = prompt
        self.turn_title = title or prompt
        self.runs += 1
        self.accounting.start_run()
        self.set_status("running")
        return self._cancel

    def end_run(self, status: str) -> Tally:
        """Mark the run as over; returns its tally."""
        self._cancel = None
        tally = self.accounting.end_run()
        previous = self.checkpoints[-1] if self.checkpoints else None
        turn = len(self.checkpoints) + 1
        self.checkpoints.append(self._checkpoint(turn, self.turn_title, previous))
        self.set_status(status)
        return tally

    def _checkpoint(
        self, turn: int, prompt: str, previous: rewind.Checkpoint | None
    ) -> rewind.Checkpoint:
        return rewind.checkpoint(
            turn, prompt, len(self.messages), self.context.compactions, self.changes, previous
        )

    def _refresh_checkpoint(self) -> None:
        """The last turn's checkpoint with what happened since its run ended (the user
        accepted or rejected its edits)."""
        if self.checkpoints and self.checkpoints[-1].messages == len(self.messages):
            last = self.checkpoints[-1]
            previous = self.checkpoints[-2] if len(self.checkpoints) > 1 else None
            self.checkpoints[-1] = self._checkpoint(last.turn, last.prompt, previous)

    def turn_list(self) -> list[TurnPayload]:
        self._refresh_checkpoint()
        return [{"turn": c.turn, "prompt": c.prompt, "files": c.files} for c in self.checkpoints]

    def rewind(self, turn: int) -> RewindPayload:
        """Back to the end of `turn`: later prompts leave the history, the staged changeset
        is that turn's, and changes applied since are staged in reverse (see
        `agentls.agent.persistence.rewind`). `RewindError` for a turn that cannot be rewound to."""
        if self.running or self.context.compacting:
            raise SessionBusy(f"session {self.id} is running; cancel it or wait")
        self._refresh_checkpoint()
        if not 1 <= turn <= len(self.checkpoints):
            raise rewind.RewindError(
                f"session {self.id} has no turn {turn} (it has {len(self.checkpoints)})"
            )
        point = self.checkpoints[turn - 1]
        if point.compactions != self.context.compactions:
            raise rewind.RewindError(
                f"the session was compacted after turn {turn}: its history before the "
                "summary is gone, so it cannot be rewound that far"
            )
        dropped = [
            TurnPayload(turn=c.turn, prompt=c.prompt, files=c.files)
            for c in self.checkpoints[turn:]
        ]
        undo = self.changes.applied[point.applied :]
        self.messages = self.messages[: point.messages]
        self.changes.discard()
        staged.restore(point.staged, into=self.changes)
        reverted = rewind.reverse(undo, self.changes)
        self.changes.applied = self.changes.applied[: point.applied]
        self.checkpoints = self.checkpoints[:turn]
        self.last_prompt = point.prompt
        self.transcript.write(
            "rewind",
            turn=turn,
            dropped=[d["prompt"] for d in dropped],
            reverted=[str(p) for p in reverted],
        )
        self.on_change()
        return {
            "session": self.id,
            "turn": turn,
            "dropped": dropped,
            "staged": self.staged_paths(),
            "reverted": [str(p) for p in reverted],
        }

    def begin_turn(self) -> None:
        self.turns += 1

    def cancel(self) -> bool:
        """Ask the running run to stop; returns whether one was running."""
        if self._cancel is None:
            return False
        self._cancel.set()
        return True

    def set_status(self, status: str) -> None:
        self.status = status
        self.on_change()

    def checkpoint(self, turn: int) -> None:
        """Journal a complete turn of the current run (see `agentls.agent.persistence.journal`)."""
        changes = staged.snapshot(self.changes) if self.changes_dirty else None
        todos = todo_list.todo_payloads(self.todos) if self.todos_dirty else None
        self.changes_dirty = self.todos_dirty = False
        journal.write_checkpoint(
            self.transcript,
            run=self.runs,
            turn=turn,
            turns=self.turns,
            tally=self.accounting.session,
            staged_paths=self.staged_paths(),
            changes=changes,
            todos=todos,
        )

    def set_todos(self, todos: Sequence[TodoItem]) -> None:
        """Replace the todo list (journaled with the next checkpoint, saved with the state)."""
        self.todos = list(todos)
        self.todos_dirty = True
        self.transcript.write("todos", todos=todo_list.todo_payloads(self.todos))

    def tell_model(self, note: str) -> None:
        """Queue a note for the session's next request (e.g. the user rejected a hunk, and
        why); saved with the state, so it survives a restart and reaches a CLI `resume`."""
        self.reminders.append(text_block(note))
        self.on_change()

    def staged_paths(self) -> list[str]:
        return [str(p) for p in self.changes.changed_paths()]

    def _changes_changed(self, event: ChangeEvent) -> None:
        self.changes_dirty = True
        self.staging_count += 1
        self.on_staging(event)

    # --- history --------------------------------------------------------------------------

    def add_user_content(self, blocks: Sequence[ContentBlockParam]) -> None:
        """Append user content, merging into a trailing user message (roles must alternate)."""
        add_user_blocks(self.messages, blocks)
        self.transcript.write("message", role="user", content=list(blocks))

    def add_assistant(self, content: list[ContentBlockParam]) -> None:
        if content:
            self.messages.append(assistant_message(content))
        self.transcript.write("message", role="assistant", content=content)

    def initial_context(self, prompt: str = "") -> list[ContentBlockParam]:
        """Blocks that go before the user's prompt: the pinned instruction files on a new
        session's first prompt, with the workspace overview and the files `prompt` names;
        notes waiting for the model (e.g. after a restart)."""
        blocks: list[ContentBlockParam] = []
        if not self.messages and self.config.pin_instruction_files:
            block = cx.instructions_block(cx.load_instruction_files(self.config.workspace.roots))
            if block is not None:
                blocks.append(block)
        if not self.messages and self.settings.tools.overview:
            blocks.extend(self._overview())
            blocks.extend(self._named_files(prompt))
        blocks.extend(self.reminders)
        self.reminders = []
        return blocks

    def _overview(self) -> list[ContentBlockParam]:
        """The workspace overview (`agentls.agent.run.overview`); a failure only costs it."""
        try:
            text = workspace_overview(
                self.config.workspace,
                self.changes,
                overview_budget(self.context_window()),
                self._readable,
            )
        except Exception:
            log.exception("the workspace overview failed")
            return []
        return [text_block(Redactor.from_env().redact(text))] if text else []

    def _named_files(self, prompt: str) -> list[ContentBlockParam]:
        """The files the prompt names, as read (`agentls.agent.run.mentions`); a failure only
        costs them."""
        if not prompt:
            return []
        try:
            text = shown_as_read(
                prompt,
                self.config.workspace,
                self.changes,
                self.reads,
                overview_budget(self.context_window()),
                self._readable,
                Redactor.from_env(),
                listings=self.system_listings,
            )
        except Exception:
            log.exception("showing the files the prompt names failed")
            return []
        self.files_shown = bool(text) and self.system_listings
        return [text_block(text)] if text else []

    def _readable(self, path: Path) -> bool:
        """Whether read_file could show `path` without asking: not a secret file, and no
        deny or ask rule of the policy covers reading it (the overview must not show what a
        read would not)."""
        workspace = self.config.workspace
        if workspace.services.secrets.match(path) is not None:
            return False
        rules = getattr(self.config.permissions, "rules", None)
        if rules is None:
            return True
        subject = call_subject("read_file", {"path": str(path)}, workspace.roots)
        return all(rules.first_hit(kind, subject) is None for kind in ("deny", "ask"))

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
            messages=with_cache_breakpoint(self.request_messages()),
            temperature=self.settings.temperature,
            thinking_budget=self.settings.thinking_budget,
        )

    def request_messages(self) -> History:
        """The history as sent: large tool results before the stub boundary are stubbed
        (the boundary moves step-wise; see `agentls.agent.run.compaction`)."""
        total = len(cx.assistant_indices(self.messages))
        self.context.stub_boundary = cx.next_stub_boundary(
            self.context.stub_boundary, total, self.settings.stub_after_turns
        )
        messages = cx.stub_old_results(
            self.messages, self.context.stub_boundary, self.settings.stub_min_chars
        )
        return _with_environment(messages, self.environment)

    def _system_for(self, pool: ToolPool) -> list[TextBlockParam]:
        """The cached main prompt, then what depends on the tools: the tool sources'
        instructions and the deferred-tools reminder (each stable for the session)."""
        blocks = list(self.system)
        if self.source_instructions:
            blocks.append(text_block(self.source_instructions))
        if pool.deferred:
            hints = [(t.name, one_line(t.description())) for t in pool.deferred_tools]
            blocks.append(
                text_block(deferred_tools_reminder(hints, server_side=pool.search.server_side))
            )
        return blocks if len(blocks) > len(self.system) else self.system

    def record_request(self, request: ModelRequest) -> None:
        tools_json = json.dumps(request.tools, separators=(",", ":"))
        self.transcript.write(
            "request",
            run=self.runs,
            turn=self.turns,
            model=request.model,
            max_tokens=request.max_tokens,
            message_count=len(request.messages),
            system_chars=sum(len(b["text"]) for b in request.system),
            tools=[_tool_name(t) for t in request.tools],
            tools_sha256=hashlib.sha256(tools_json.encode()).hexdigest(),
        )

    # --- saved state ----------------------------------------------------------------------

    def snapshot(self) -> SessionState:
        """What the store writes (no credentials: settings are not part of it)."""
        self.changes_dirty = False
        tally = self.accounting.session
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
            usage=dataclasses.asdict(tally.usage),
            cost_usd=tally.cost_usd,
            cost_note=tally.cost_note,
            messages=self.messages,
            discovered_tools=sorted(self.discovered),
            staged_paths=self.staged_paths(),
            staged=staged.snapshot(self.changes),
            todos=todo_list.todo_payloads(self.todos),
            reminders=[block["text"] for block in self.reminders],
            checkpoints=list(self.checkpoints),
            applied=staged.snapshot_entries(self.changes.applied),
            compactions=self.context.compactions,
            stub_boundary=self.context.stub_boundary,
            token_ratio=self.context.estimator.ratio,
            last_input_tokens=self.context.last_input_tokens,
            transcript=str(self.transcript.path),
        )

    def load(self, state: SessionState) -> None:
        """Take over a saved state (history, counters, staged edits, context bookkeeping)."""
        self.messages = list(state.messages)
        self.accounting.session = Tally(
            Usage.from_dict(state.usage), state.cost_usd, state.cost_note
        )
        self.turns, self.runs = state.turns, state.runs
        self.created, self.first_prompt = state.created, state.first_prompt
        self.last_prompt = state.last_prompt
        self.discovered = set(state.discovered_tools)
        self.context.compactions = state.compactions
        self.context.stub_boundary = state.stub_boundary
        self.context.estimator.ratio = state.token_ratio
        self.context.last_input_tokens = state.last_input_tokens
        self.status = state.status
        self.todos = todo_list.parse_todos(state.todos)
        self.reminders.extend(text_block(note) for note in state.reminders)
        self.checkpoints = list(state.checkpoints)
        self.changes.applied = [staged.change_of(entry) for entry in state.applied]
        if state.staged is not None:
            staged.restore(state.staged, into=self.changes)
        elif state.staged_paths:
            self.reminders.append(_lost_staged_note(state.staged_paths))
        self.changes_dirty = False

    # --- status ---------------------------------------------------------------------------

    def status_dict(self) -> SessionStatusPayload:
        """For `agentls.status`: one session's figures (the CLI reads `usage.cost_usd`)."""
        window = self.context_window()
        used = self.context.last_input_tokens
        return {
            "id": self.id,
            "status": self.status,
            "running": self.running,
            "turns": self.turns,
            "runs": self.runs,
            "usage": self.accounting.session.payload(),
            "context": {
                "window": window,
                "last_input_tokens": used,
                "share": round(used / window, 4) if used else None,
                "compact_threshold": self.settings.compact_threshold,
                "compactions": self.context.compactions,
            },
            "model": self.settings.model,
            "created": self.created,
            "first_prompt": self.first_prompt,
            "staged": self.staged_paths(),
            "hunks": staged.hunk_payloads(self.changes),
            "history": self.turn_list(),
            "todos": todo_list.todo_payloads(self.todos),
            "transcript": self.transcript.path.as_uri(),
            "state_file": None,
        }


def _tool_name(tool: ToolUnionParam) -> str:
    entry = cast(Mapping[str, object], tool)
    return str(entry.get("name") or entry.get("type") or "?")


def _lost_staged_note(paths: Sequence[str]) -> TextBlockParam:
    listed = "\n".join(f"- {p}" for p in paths)
    return text_block(
        "<system-reminder>This session was resumed after the server restarted. Edits you had "
        f"staged but the user had not accepted were lost and are not in the files now:\n{listed}"
        "\nRe-read those files and redo the edits if they are still needed.</system-reminder>"
    )
