"""One run's `session/update` stream: the core's events as ACP updates.

- `text_delta` → `agent_message_chunk`;
- `tool_started` → `tool_call` (kind, title, absolute locations, `rawInput`);
- `tool_output` + `tool_finished` → `tool_call_update` with the status and content: a
  `diff` per file the call changed (the whole file before and after the call, so the
  client can show it and check it), the client terminal it ran in, and its output;
- `todos` (the `todo_write` tool's list) → `plan`;
- notices and retries → `agent_thought_chunk` (said, but out of the answer's text);
- `turn_usage` → `usage_update` (the context used and its size, the session's cost so far),
  after every model response, so the client's meter moves during the run;
- `mode_changed` with a new permission mode (the user approved a plan) →
  `current_mode_update`, and the session's mode follows.

The text before a call is taken when the call starts and replaced by what the client
answered if the pipeline read the file through the client just before the call ran
(`pulled`), so a diff is always against what the user had.
"""

from __future__ import annotations

import difflib
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    Cost,
    CurrentModeUpdate,
    FileEditToolCallContent,
    TerminalToolCallContent,
    TextContentBlock,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    ToolKind,
    UsageUpdate,
)

from agentls.acp.approvals import ToolCallContent, text_content
from agentls.acp.mapping import plan_entries, tool_kind, tool_locations
from agentls.agent.permissions.approval import PERMISSION_MODES
from agentls.agent.protocol.events import (
    AgentEvent,
    ModeChanged,
    Notice,
    Retrying,
    TextDelta,
    ToolFinished,
    ToolOutputReady,
    ToolStarted,
    TurnUsage,
)
from agentls.workspace.merge import lines_with_endings

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from agentls.acp.client import ClientLink
    from agentls.agent.permissions.approval import PermissionMode
    from agentls.agent.protocol.results import RunPayload
    from agentls.host import AgentHost, RunHandle

log = logging.getLogger(__name__)


class ModedSession(Protocol):
    """An ACP session as far as its reporter sees it: the mode the client shows."""

    mode: PermissionMode


class ReportingFolder(Protocol):
    """What a run's reporter needs of its session folder (`agentls.acp.workspace.AcpWorkspace`,
    which imports this module to make reporters: naming it here would close an import
    cycle)."""

    @property
    def link(self) -> ClientLink: ...
    @property
    def host(self) -> AgentHost: ...
    @property
    def terminals(self) -> dict[str, str]: ...
    @property
    def sessions(self) -> Mapping[str, ModedSession]: ...
    def layered_text(self, session_id: str, path: str | Path) -> str | None: ...


CHANGING_KINDS: frozenset[ToolKind] = frozenset({"edit", "delete", "move"})
OUTPUT_LIMIT = 20_000
"""Characters of a call's output shown in the client (the model got all of it)."""


@dataclass
class _Call:
    name: str
    kind: ToolKind
    paths: list[str]
    before: dict[str, str | None] = field(default_factory=dict)
    output: str | None = None
    is_error: bool = False


class AcpReporter:
    """The `RunReporter` of one run of an ACP session."""

    def __init__(self, workspace: ReportingFolder, run: RunHandle) -> None:
        self.workspace = workspace
        self.run = run
        self.session_id = run.session_id
        self.calls: dict[str, _Call] = {}
        self.last_stop: str | None = None
        """The stop reason of the run's last model response (`max_tokens` shows there)."""

    # -- RunReporter ----------------------------------------------------------------------

    async def begin(self) -> None:
        return None

    def on_event(self, event: AgentEvent) -> None:
        if isinstance(event, TextDelta):
            self._send(
                AgentMessageChunk(session_update="agent_message_chunk", content=_text(event.text))
            )
        elif isinstance(event, ToolStarted):
            self._started(event)
        elif isinstance(event, ToolOutputReady):
            call = self.calls.get(event.tool_use_id)
            if call is not None:
                call.output, call.is_error = event.content, event.is_error
        elif isinstance(event, ToolFinished):
            self._finished(event.tool_use_id, failed=event.is_error)
        elif isinstance(event, TurnUsage):
            self.last_stop = event.stop_reason
            self._usage(event)
        elif isinstance(event, ModeChanged):
            self._mode_changed(event)
        elif isinstance(event, Notice):
            self._thought(event.message)
        elif isinstance(event, Retrying):
            self._thought(
                f"The model request failed ({event.error}); retry {event.attempt} in "
                f"{event.delay_s:.1f} s."
            )
        elif getattr(event, "type", None) == "todos":
            self._send(
                AgentPlanUpdate(
                    session_update="plan", entries=plan_entries(getattr(event, "todos", []))
                )
            )

    async def end(self, result: RunPayload) -> None:
        for tool_use_id in list(self.calls):
            self._finished(tool_use_id, failed=True)  # a call the run left open
        await self.workspace.link.flush()

    # -- the client read a file just before a call ----------------------------------------

    def pulled(self, path: Path, text: str) -> None:
        for call in self.calls.values():
            if call.output is None and str(path) in call.before:
                call.before[str(path)] = text

    # -- tool calls -----------------------------------------------------------------------

    def _started(self, event: ToolStarted) -> None:
        read_only = self._read_only(event.name, event.input)
        kind = tool_kind(event.name, read_only)
        roots = self.workspace.host.workspace.roots
        locations = tool_locations(event.name, event.input, roots)
        call = _Call(event.name, kind, [loc.path for loc in locations])
        if kind in CHANGING_KINDS:
            call.before = {
                path: self.workspace.layered_text(self.session_id, path) for path in call.paths
            }
        self.calls[event.tool_use_id] = call
        self._send(
            ToolCallStart(
                session_update="tool_call",
                tool_call_id=event.tool_use_id,
                title=event.summary,
                kind=kind,
                status="in_progress",
                locations=locations or None,
                raw_input=event.input,
            )
        )

    def _finished(self, tool_use_id: str, *, failed: bool) -> None:
        call = self.calls.pop(tool_use_id, None)
        if call is None:
            return
        failed = failed or call.is_error
        content: list[ToolCallContent] = []
        locations: list[ToolCallLocation] = []
        if not failed:
            for diff, line in self._diffs(call):
                content.append(diff)
                locations.append(ToolCallLocation(path=diff.path, line=line))
        terminal = self.workspace.terminals.pop(tool_use_id, None)
        if terminal is not None:
            content.append(TerminalToolCallContent(type="terminal", terminal_id=terminal))
        shown = _shown_output(call, failed)
        if shown:
            content.append(text_content(shown))
        self._send(
            ToolCallProgress(
                session_update="tool_call_update",
                tool_call_id=tool_use_id,
                status="failed" if failed else "completed",
                content=content or None,
                locations=locations or None,
                raw_output=_raw_output(call.output),
            )
        )

    def _diffs(self, call: _Call) -> list[tuple[FileEditToolCallContent, int | None]]:
        found = []
        for path, before in call.before.items():
            after = self.workspace.layered_text(self.session_id, path)
            if after == before:
                continue
            diff = FileEditToolCallContent(
                type="diff", path=path, old_text=before, new_text=after if after is not None else ""
            )
            found.append((diff, first_changed_line(before or "", after or "")))
        return found

    def _read_only(self, name: str, raw_input: dict[str, object]) -> bool | None:
        session = self.workspace.host.sessions.get(self.session_id)
        if session is None:
            return None
        tool = session.pool(self.run.mode).find(name)
        if tool is None:
            return None
        try:
            return bool(tool.is_read_only(tool.parse_input(raw_input)))
        except Exception:
            return None

    # -- usage and modes ------------------------------------------------------------------

    def _usage(self, event: TurnUsage) -> None:
        session = self.workspace.host.sessions.get(self.session_id)
        if session is None:
            return
        usage = event.usage
        used = (
            usage["input_tokens"]
            + usage["cache_read_input_tokens"]
            + usage["cache_creation_input_tokens"]
            + usage["output_tokens"]
        )
        tally = session.accounting.session
        cost = Cost(amount=tally.cost_usd, currency="USD") if tally.cost_usd is not None else None
        self._send(
            UsageUpdate(
                session_update="usage_update",
                used=used,
                size=session.context_window(),
                cost=cost,
            )
        )

    def _mode_changed(self, event: ModeChanged) -> None:
        acp_session = self.workspace.sessions.get(self.session_id)
        mode = event.permission_mode
        if acp_session is None or mode not in PERMISSION_MODES or mode == acp_session.mode:
            return
        acp_session.mode = mode
        self._send(CurrentModeUpdate(session_update="current_mode_update", current_mode_id=mode))

    # -- sending --------------------------------------------------------------------------

    def _thought(self, text: str) -> None:
        self._send(
            AgentThoughtChunk(session_update="agent_thought_chunk", content=_text(text + "\n"))
        )

    def _send(self, update: object) -> None:
        self.workspace.link.send(self.session_id, update)


def _text(text: str) -> TextContentBlock:
    return TextContentBlock(type="text", text=text)


def _shown_output(call: _Call, failed: bool) -> str:
    """The output the client shows: not a successful read (the file is in the editor)."""
    if not call.output or (call.kind == "read" and call.name == "read_file" and not failed):
        return ""
    text = call.output
    if len(text) > OUTPUT_LIMIT:
        text = text[:OUTPUT_LIMIT] + f"\n… [{len(call.output) - OUTPUT_LIMIT} more characters]"
    return f"```\n{text}\n```" if call.kind in ("execute", "search") and not failed else text


def _raw_output(output: str | None) -> str | None:
    """`rawOutput` too, when it is small (the content already carries the shown part)."""
    return output if output is not None and len(output) <= OUTPUT_LIMIT else None


def first_changed_line(before: str, after: str) -> int | None:
    """The 1-based line where `after` first differs from `before` (where to look)."""
    matcher = difflib.SequenceMatcher(
        None, lines_with_endings(before), lines_with_endings(after), autojunk=False
    )
    for tag, _i1, _i2, j1, _j2 in matcher.get_opcodes():
        if tag != "equal":
            return j1 + 1
    return None
