"""Typed events the loop emits; hosts turn them into progress UI, logs and notifications.

Each event is a frozen dataclass; `event_to_dict` gives its JSON form, the payload of the
LSP `agentls/event` notification. The `*Payload` TypedDicts below spell out those payloads
for readers (the CLI, editor plugins, `docs/lsp.md`); a test keeps them in step with the
dataclasses.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Literal, NotRequired, TypedDict, cast

from agentls.agent.protocol.usage import UsageDict

RunStatus = Literal["completed", "cancelled", "failed", "max_turns", "refused"]
TodoStatus = Literal["pending", "in_progress", "completed"]


class TodoPayload(TypedDict):
    """One entry of the session's todo list (the `todos` event, `agentls.status`)."""

    content: str
    status: TodoStatus
    active_form: str


@dataclass(frozen=True)
class RunStarted:
    session_id: str
    prompt: str
    type: Literal["run_started"] = "run_started"


@dataclass(frozen=True)
class TextDelta:
    session_id: str
    text: str
    type: Literal["text_delta"] = "text_delta"


@dataclass(frozen=True)
class ToolStarted:
    session_id: str
    tool_use_id: str
    name: str
    summary: str
    input: dict[str, object]
    started_at: float
    type: Literal["tool_started"] = "tool_started"
    parent_tool_use_id: str | None = None
    """A sub-agent's call: the `task` call that launched the sub-agent (its summary starts
    with the sub-agent's type, "explore: Reading src/app.py")."""


@dataclass(frozen=True)
class ToolFinished:
    session_id: str
    tool_use_id: str
    name: str
    is_error: bool
    duration_ms: float
    started_at: float
    finished_at: float
    type: Literal["tool_finished"] = "tool_finished"
    parent_tool_use_id: str | None = None


@dataclass(frozen=True)
class ToolProgress:
    """A running tool call's progress (e.g. an MCP server's progress notifications)."""

    session_id: str
    tool_use_id: str
    message: str
    type: Literal["tool_progress"] = "tool_progress"


@dataclass(frozen=True)
class ToolOutputReady:
    """A call's result as the model gets it (redacted and truncated), as text (images are
    named), just before its `tool_finished`. For hosts that show tool output live (ACP's
    `tool_call_update` content); the LSP does not forward it (`agentls.toolResult` fetches
    an output on demand)."""

    session_id: str
    tool_use_id: str
    name: str
    content: str
    is_error: bool
    type: Literal["tool_output"] = "tool_output"


@dataclass(frozen=True)
class TurnUsage:
    session_id: str
    turn: int
    usage: UsageDict
    stop_reason: str | None
    type: Literal["turn_usage"] = "turn_usage"


@dataclass(frozen=True)
class Retrying:
    """The model request failed transiently; text streamed in this attempt is discarded."""

    session_id: str
    attempt: int
    delay_s: float
    error: str
    type: Literal["retrying"] = "retrying"


@dataclass(frozen=True)
class Notice:
    """Something the user should know that is not an error (e.g. output hit max_tokens)."""

    session_id: str
    message: str
    type: Literal["notice"] = "notice"


@dataclass(frozen=True)
class Todos:
    """The session's todo list changed (`todo_write`): the whole list, in order."""

    session_id: str
    todos: list[TodoPayload]
    type: Literal["todos"] = "todos"


@dataclass(frozen=True)
class ModeChanged:
    """The run switched modes mid-run: into plan mode, or out of it after the user approved
    the plan (`mode` is then `review` or `auto`; `permission_mode` what the session's
    permission mode became, None when it did not change)."""

    session_id: str
    mode: str
    permission_mode: str | None = None
    type: Literal["mode_changed"] = "mode_changed"


class RunFinishedExtra(TypedDict, total=False):
    """Figures added to `run_finished` after its first version (hence nested)."""

    cost_usd: float | None
    """The run's cost; null when a response had no known price."""
    session_cost_usd: float | None
    compactions: int


@dataclass(frozen=True)
class RunFinished:
    session_id: str
    status: RunStatus
    text: str
    usage: UsageDict
    turns: int
    error: str | None = None
    transcript: str | None = None
    type: Literal["run_finished"] = "run_finished"
    extra: RunFinishedExtra = field(default_factory=lambda: RunFinishedExtra())


AgentEvent = (
    RunStarted
    | TextDelta
    | ToolStarted
    | ToolFinished
    | ToolProgress
    | TurnUsage
    | Retrying
    | Notice
    | RunFinished
    | ToolOutputReady
    | Todos
    | ModeChanged
)
EventSink = Callable[[AgentEvent], None]


# --- the JSON payloads (`agentls/event`) ---------------------------------------------------


class RunStartedPayload(TypedDict):
    type: Literal["run_started"]
    session_id: str
    prompt: str


class TextDeltaPayload(TypedDict):
    type: Literal["text_delta"]
    session_id: str
    text: str


class ToolStartedPayload(TypedDict):
    type: Literal["tool_started"]
    session_id: str
    tool_use_id: str
    name: str
    summary: str
    input: dict[str, object]
    started_at: float
    parent_tool_use_id: str | None
    """Set on a sub-agent's calls: the id of the `task` call that launched it."""


class ToolFinishedPayload(TypedDict):
    type: Literal["tool_finished"]
    session_id: str
    tool_use_id: str
    name: str
    is_error: bool
    duration_ms: float
    started_at: float
    finished_at: float
    parent_tool_use_id: str | None


class ToolProgressPayload(TypedDict):
    type: Literal["tool_progress"]
    session_id: str
    tool_use_id: str
    message: str


class ToolOutputReadyPayload(TypedDict):
    type: Literal["tool_output"]
    session_id: str
    tool_use_id: str
    name: str
    content: str
    is_error: bool


class TurnUsagePayload(TypedDict):
    type: Literal["turn_usage"]
    session_id: str
    turn: int
    usage: UsageDict
    stop_reason: str | None


class RetryingPayload(TypedDict):
    type: Literal["retrying"]
    session_id: str
    attempt: int
    delay_s: float
    error: str


class NoticePayload(TypedDict):
    type: Literal["notice"]
    session_id: str
    message: str


class RunFinishedPayload(TypedDict):
    type: Literal["run_finished"]
    session_id: str
    status: RunStatus
    text: str
    usage: UsageDict
    turns: int
    error: str | None
    transcript: str | None
    extra: NotRequired[RunFinishedExtra]


class TodosPayload(TypedDict):
    type: Literal["todos"]
    session_id: str
    todos: list[TodoPayload]


class ModeChangedPayload(TypedDict):
    type: Literal["mode_changed"]
    session_id: str
    mode: str
    permission_mode: str | None


EventPayload = (
    RunStartedPayload
    | TextDeltaPayload
    | ToolStartedPayload
    | ToolFinishedPayload
    | ToolProgressPayload
    | TurnUsagePayload
    | RetryingPayload
    | NoticePayload
    | RunFinishedPayload
    | ToolOutputReadyPayload
    | TodosPayload
    | ModeChangedPayload
)
"""What an `agentls/event` notification carries, by `type`."""


def event_to_dict(event: AgentEvent) -> EventPayload:
    """JSON-ready form, e.g. for the LSP `agentls/event` notification."""
    return cast(EventPayload, asdict(event))


def ignore_event(event: AgentEvent) -> None:
    del event
