"""The typed shapes agentls answers with: run results, status, sessions, edits, tools.

These TypedDicts are the JSON the LSP commands return (see `docs/lsp.md`, which names
them) and the CLI reads. Fields are only ever added, never renamed or removed: editors and
scripts rely on them. `RunResult` is the core's own result of one run; `to_dict` gives its
JSON form.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NotRequired, TypedDict

from agentls.agent.protocol.accounting import Tally, UsagePayload
from agentls.agent.protocol.events import RunStatus, TodoPayload
from agentls.agent.protocol.messages import ToolResultContent, ToolUnionParam
from agentls.agent.protocol.usage import Usage, UsageDict

__all__ = [
    "AcceptPayload",
    "CancelPayload",
    "CompactionPayload",
    "ContextPayload",
    "EditPayload",
    "HostStatusPayload",
    "LeftOutPayload",
    "RefusedEditPayload",
    "RejectPayload",
    "RunPayload",
    "RunResult",
    "SessionStatusPayload",
    "SessionSummaryPayload",
    "SessionsPayload",
    "StagedFilePayload",
    "StagedPayload",
    "StartedPayload",
    "StartingSessionPayload",
    "StatusPayload",
    "ToolCallPayload",
    "ToolResultPayload",
    "ToolsPayload",
    "UsagePayload",
]


class LeftOutPayload(TypedDict):
    """A file whose edit was not applied and stays staged, and why."""

    uri: str
    reason: str


class EditPayload(TypedDict):
    """What happened to a run's (or an accept's) edits."""

    files: list[str]
    applied: bool | None
    """True: the editor applied them; False: it refused; None: still staged."""
    reason: NotRequired[str]
    conflicts: NotRequired[list[str]]
    left_out: NotRequired[list[LeftOutPayload]]
    """Each file that was not applied (it stays staged), with the reason."""


class TestsCheckPayload(TypedDict):
    """The relevant tests run on the staged changeset before review."""

    status: str
    """`passed`, `failed`, `timeout`, `no_tests` or `not_run` (`summary` says why)."""
    summary: str
    """E.g. "tests 41/41 ✓", "tests 40/41 ✗ (tests/test_b.py::test_x)"."""
    which: str
    """"the tests the agent ran" or "the tests for the changed files"."""
    targets: list[str]
    passed: int
    failed: int
    """Failed and errored tests."""
    total: int
    failures: list[str]
    """The failing tests' ids (at most 10)."""


class FileCheckPayload(TypedDict):
    """One staged file checked before review (`checks.beforeReview`)."""

    path: str
    checked: bool
    """False: not checked (`summary` says why: not ready in time, a failure)."""
    new_errors: int
    new_warnings: int
    resolved: int
    problems: list[str]
    """The new problems, `file:line severity: message (code)`."""
    summary: str
    """E.g. "tests 41/41 ✓ · 0 new errors", "1 new error: b.py:3 Argument of type…"."""
    source: str
    """The sources that checked it (language server, linters), comma-separated."""
    tests: NotRequired[TestsCheckPayload]
    """The relevant tests, run once for the changeset (the same in every file's entry)."""
    held: NotRequired[bool]
    """True: kept staged by `checks.block: "newErrors"` in auto mode."""


class RunPayload(TypedDict):
    """`agentls.run {wait: true}` / `agentls.ask` result, and the CLI's `--json` output."""

    session: str | None
    status: str
    """`completed`, `cancelled`, `failed`, `max_turns` or `refused`."""
    text: str
    usage: UsagePayload | UsageDict | dict[str, int]
    """The run's tokens and cost (`UsagePayload`); empty when the run never started."""
    edit: NotRequired[EditPayload | None]
    checks: NotRequired[list[FileCheckPayload]]
    """The staged files checked before review (`checks.beforeReview`)."""
    turns: NotRequired[int]
    transcript: NotRequired[str]
    error: NotRequired[str]
    notices: NotRequired[list[str]]
    compactions: NotRequired[int]
    answer: NotRequired[str]
    """`agentls.ask`: the URI of the document the long answer was shown in."""
    diff: NotRequired[str]
    """Added by the CLI: the unified diff of the run's changes."""
    refused_edits: NotRequired[list[RefusedEditPayload]]
    """Added by the CLI: the run's write calls the permission policy refused."""
    all_edits_refused: NotRequired[bool]
    """Added by the CLI: every write call was refused (the CLI exits 1)."""


class RefusedEditPayload(TypedDict):
    """One refused write call, as the CLI reports it (`--json`: `refused_edits`)."""

    tool: str
    summary: str
    reason: str
    rule: str
    """The `--allow` rule that would allow it."""


class StartedPayload(TypedDict):
    """`agentls.run` / `agentls.ask` without `wait`: the run goes on in the background."""

    session: str


class CancelPayload(TypedDict):
    cancelled: list[str]


class AcceptPayload(EditPayload):
    session: str


class HunksAcceptPayload(AcceptPayload):
    """`agentls.accept {hunks}`: the accept's result and the hunk ids accepted."""

    hunks: list[int]


class RejectPayload(TypedDict):
    session: str
    files: list[str]
    hunks: NotRequired[list[int]]
    """With `hunks`: the ids rejected (the files listed are those they were in)."""


class ToolCallPayload(TypedDict):
    """`agentls.tool`: one call through the full pipeline."""

    content: str | list[ToolResultContent]
    is_error: bool


class ToolResultPayload(TypedDict):
    """`agentls.toolResult`: one tool call's output as text (images are named)."""

    tool_use_id: str
    content: str
    is_error: bool


class StagedFilePayload(TypedDict):
    """One staged file in `agentls.staged`; texts are None where the file does not exist."""

    uri: str
    kind: str
    old_uri: str | None
    original: str | None
    """What the agent read."""
    staged: str | None
    """What the agent wants."""
    current: str | None
    """What the editor has now."""
    check: NotRequired[str]
    """The file's check before review, as the run ended (`FileCheckPayload.summary`)."""


class HunkPayload(TypedDict):
    """One hunk of a session's staged diff (`agentls.status`, `agentls.sessions`,
    `agentls.staged`): its `id` is what `agentls.accept`/`agentls.reject` take in `hunks`."""

    id: int
    path: str
    index: int
    """Its number within the file, from 1."""
    kind: str
    where: str
    """`lines 3-4`, `after line 7`, `new file`..."""
    old_start: int
    old_lines: int
    new_start: int
    new_lines: int
    diff: str
    """Unified-diff text of the hunk (header, `-` and `+` lines)."""


class StagedPayload(TypedDict):
    """`agentls.staged`: a session's staged files with the texts a diff view needs."""

    session: str
    files: list[StagedFilePayload]
    hunks: NotRequired[list[HunkPayload]]
    checks: NotRequired[list[FileCheckPayload]]
    """The staged files checked before review, as the last run ended."""


ToolsPayload = list[ToolUnionParam]
"""`agentls.tools`: the `tools` array exactly as the next request sends it."""


class ContextPayload(TypedDict):
    window: int
    last_input_tokens: int | None
    share: float | None
    compact_threshold: float
    compactions: int


class SessionStatusPayload(TypedDict):
    """One session in `agentls.status`."""

    id: str
    status: str
    running: bool
    turns: int
    runs: int
    usage: UsagePayload
    context: ContextPayload
    model: str
    created: float
    first_prompt: str
    staged: list[str]
    hunks: list[HunkPayload]
    """The staged diff, hunk by hunk (ids for `agentls.accept`/`agentls.reject`)."""
    history: list[TurnPayload]
    """The session's turns with their prompts and files (for `agentls.rewind`)."""
    todos: list[TodoPayload]
    """The agent's todo list (`todo_write`), in order."""
    transcript: str
    state_file: str | None
    checks: NotRequired[list[FileCheckPayload]]
    """The staged files checked before review, as the last run ended."""


class TurnPayload(TypedDict):
    """One turn (a prompt and its run) in `agentls.status`: what `agentls.rewind` takes."""

    turn: int
    prompt: str
    files: list[str]
    """Files this turn changed (staged or applied)."""


class RewindPayload(TypedDict):
    """`agentls.rewind`: what the session went back to."""

    session: str
    turn: int
    dropped: list[TurnPayload]
    """The later turns, now gone from the history."""
    staged: list[str]
    reverted: list[str]
    """Files whose applied changes are reversed (staged, delivered like any edit)."""


class StartingSessionPayload(TypedDict):
    """A session whose first run is still starting (the model SDK is being loaded)."""

    id: str
    status: str
    running: bool
    turns: int
    runs: int


class HostStatusPayload(TypedDict):
    sessions: list[SessionStatusPayload | StartingSessionPayload]
    model: str
    endpoint: str
    credentials: bool
    workspace: list[str]
    tool_sources: list[Mapping[str, object]]
    """One entry per MCP server (name, state, tools, …)."""
    sandbox: Mapping[str, object]
    """Whether commands, tests and linters run sandboxed, and the fix when they cannot."""
    code_intel: Sequence[Mapping[str, object]]
    """Code intelligence: the editor bridge and each language server (which run, for which
    languages, and why one does not; docs/code-intelligence.md)."""
    trust: NotRequired[Mapping[str, object]]
    """Workspace trust: `{state, trusted, workspace, sources, held_back, loosening, digest,
    decided_at}` (`agentls.agent.claude.trust.WorkspaceTrust.payload`)."""
    agents: NotRequired[Mapping[str, object]]
    """Sub-agent types for `task` (`AgentsStatusPayload`: `types`, and `problems` with the
    agent files that were skipped and why)."""


class StatusPayload(HostStatusPayload):
    """`agentls.status`: the host's figures plus what only the language server knows."""

    mode: NotRequired[str]
    settings: NotRequired[Mapping[str, object]]
    """The effective settings (camelCase, as the editor would write them)."""
    permission_mode: NotRequired[str | None]
    index: NotRequired[Mapping[str, object]]


class SessionSummaryPayload(TypedDict):
    """One saved session in `agentls.sessions` / `agentls sessions --json`."""

    id: str
    created: float
    updated: float
    workspace: list[str]
    model: str
    first_prompt: str
    status: str
    runs: int
    turns: int
    tokens: int
    cost_usd: float | None
    state_file: str
    staged: NotRequired[list[str]]
    """Paths with staged (saved, undelivered) edits."""
    hunks: NotRequired[list[HunkPayload]]
    """Those edits hunk by hunk (ids for `agentls.accept`/`agentls.reject`)."""


class SessionsPayload(TypedDict):
    sessions: list[SessionSummaryPayload]


class CompactionPayload(TypedDict):
    """`agentls.compact`, and the transcript's `compaction` record."""

    reason: str
    before_tokens: int
    after_tokens: int
    messages_before: int
    messages_after: int
    summarized_messages: int
    kept_turns: int
    instruction_files: list[str]
    staged_paths: list[str]
    summary: str


@dataclass(frozen=True)
class RunResult:
    """One run's outcome; `tally` is the run's own tokens and cost."""

    session_id: str
    status: RunStatus
    text: str
    tally: Tally
    turns: int
    transcript: Path
    error: str | None = None
    notices: tuple[str, ...] = ()
    compactions: int = 0
    mode: str = ""
    """The run's mode when it ended (plan mode can be left mid-run); "" when unknown."""

    @property
    def usage(self) -> Usage:
        return self.tally.usage

    @property
    def cost_usd(self) -> float | None:
        return self.tally.cost_usd

    @property
    def cost_note(self) -> str | None:
        return self.tally.cost_note

    def to_dict(self) -> RunPayload:
        result: RunPayload = {
            "session": self.session_id,
            "status": self.status,
            "text": self.text,
            "usage": self.tally.payload(),
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
