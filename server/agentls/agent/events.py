"""Typed events the loop emits; hosts turn them into progress UI, logs and notifications."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

RunStatus = Literal["completed", "cancelled", "failed", "max_turns", "refused"]


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
    input: dict[str, Any]
    started_at: float
    type: Literal["tool_started"] = "tool_started"


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


@dataclass(frozen=True)
class TurnUsage:
    session_id: str
    turn: int
    usage: dict[str, int]
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
class RunFinished:
    session_id: str
    status: RunStatus
    text: str
    usage: dict[str, int]
    turns: int
    error: str | None = None
    transcript: str | None = None
    type: Literal["run_finished"] = "run_finished"
    extra: dict[str, Any] = field(default_factory=dict)


AgentEvent = (
    RunStarted
    | TextDelta
    | ToolStarted
    | ToolFinished
    | TurnUsage
    | Retrying
    | Notice
    | RunFinished
)
EventSink = Callable[[AgentEvent], None]


def event_to_dict(event: AgentEvent) -> dict[str, Any]:
    """JSON-ready form, e.g. for the LSP `agentls/event` notification."""
    return asdict(event)


def ignore_event(event: AgentEvent) -> None:
    del event
