"""Scripted assistant turns: what the fake Messages API answers, in order.

A scenario is data first (JSON files drive editor end-to-end tests and the offline demo),
with Python callables allowed where a test needs a reply computed from the request.

File format (`Scenario.from_file`): `{"description": "...", "turns": [TURN, ...]}` or a bare
list of turns, where a TURN is a `Turn` as JSON, e.g.::

    {"content": [{"type": "text", "text": "Let me look."},
                 {"type": "tool_use", "name": "read_file", "input": {"path": "a.py"}}],
     "usage": {"input_tokens": 900, "cache_read_input_tokens": 800},
     "error_status": 529, "error_times": 2, "retry_after": "1"}

Unknown keys are rejected. Omitted tool ids are generated when the file is loaded.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, model_validator

if TYPE_CHECKING:
    from agentls.testing.recorded import RecordedRequest

StopReason: TypeAlias = Literal[
    "end_turn",
    "max_tokens",
    "stop_sequence",
    "tool_use",
    "pause_turn",
    "refusal",
    "model_context_window_exceeded",
]


def new_tool_use_id() -> str:
    """A fresh id shaped like the API's (`toolu_01…`), unique across processes."""
    return "toolu_01" + uuid.uuid4().hex[:22]


class _Strict(BaseModel):
    """Rejects unknown keys so that a typo in a scenario file fails loudly, not silently."""

    model_config = ConfigDict(extra="forbid")


class TextBlock(_Strict):
    """Assistant text, streamed as several `text_delta` events."""

    type: Literal["text"] = "text"
    text: str


class ToolUseBlock(_Strict):
    """A client tool call; the id is fixed at construction so retries of a turn reuse it."""

    type: Literal["tool_use"] = "tool_use"
    name: str
    input: dict[str, object] = Field(default_factory=dict)
    id: str = Field(default_factory=new_tool_use_id)


class ThinkingBlock(_Strict):
    """Extended-thinking output; clients must echo it back with its signature."""

    type: Literal["thinking"] = "thinking"
    thinking: str
    signature: str = Field(default_factory=lambda: "sig_" + uuid.uuid4().hex)


class RedactedThinkingBlock(_Strict):
    """Thinking the API encrypted (safety): opaque `data`, echoed back unchanged."""

    type: Literal["redacted_thinking"] = "redacted_thinking"
    data: str = Field(default_factory=lambda: "redacted_" + uuid.uuid4().hex)


def new_server_tool_use_id() -> str:
    """A fresh id shaped like the API's server tool ids (`srvtoolu_01…`)."""
    return "srvtoolu_01" + uuid.uuid4().hex[:22]


class ServerToolUseBlock(_Strict):
    """A tool the API runs itself (web search): streamed like a tool_use, never answered
    by the client; its result block follows in the same turn."""

    type: Literal["server_tool_use"] = "server_tool_use"
    name: str = "web_search"
    input: dict[str, object] = Field(default_factory=dict)
    id: str = Field(default_factory=new_server_tool_use_id)


class WebSearchResult(_Strict):
    type: Literal["web_search_result"] = "web_search_result"
    url: str
    title: str
    encrypted_content: str = Field(default_factory=lambda: "enc_" + uuid.uuid4().hex)
    page_age: str | None = None


class WebSearchError(_Strict):
    type: Literal["web_search_tool_result_error"] = "web_search_tool_result_error"
    error_code: str = "unavailable"


class WebSearchToolResultBlock(_Strict):
    """The results of a `server_tool_use` web search, as the API streams them (whole)."""

    type: Literal["web_search_tool_result"] = "web_search_tool_result"
    tool_use_id: str
    content: list[WebSearchResult] | WebSearchError


ContentBlock: TypeAlias = Annotated[
    TextBlock
    | ToolUseBlock
    | ThinkingBlock
    | RedactedThinkingBlock
    | ServerToolUseBlock
    | WebSearchToolResultBlock,
    Field(discriminator="type"),
]


class Usage(_Strict):
    """Token figures to report; `None` means "estimate from the request / the content"."""

    input_tokens: int | None = Field(default=None, ge=0)
    output_tokens: int | None = Field(default=None, ge=0)
    cache_read_input_tokens: int = Field(default=0, ge=0)
    cache_creation_input_tokens: int = Field(default=0, ge=0)


class Turn(_Strict):
    """One assistant reply plus the faults to inject before (or while) it plays.

    Fault attempts (`error_status`, `raw_body`, `cut_stream_after_events`,
    `truncate_after_events`, `sse_error`) do not consume the turn: the client's retry gets
    the next fault or, finally, the real content. They are injected in that order. A `hang`
    turn is consumed by the request that hangs.

    For non-streaming requests a cut or a truncation closes the connection before any
    response, a hang holds it silently, `event_delay` delays the whole response, and
    `sse_error` and `keepalive_interval` do not apply.
    """

    content: list[ContentBlock] = Field(default_factory=list)
    stop_reason: StopReason | None = None
    stop_sequence: str | None = None
    usage: Usage = Field(default_factory=Usage)
    model: str | None = None
    """Model to report; by default the request's `model` is echoed."""

    error_status: int | None = Field(default=None, ge=400, le=599)
    error_times: int = Field(default=1, ge=0)
    error_type: str | None = None
    """Anthropic error type; derived from `error_status` when absent."""
    error_message: str | None = None
    retry_after: str | float | None = None
    """Value of the `retry-after` header sent with `error_status` replies."""

    raw_body: str | None = None
    """Answer with this body instead of a Messages API response (an HTML error page, some
    other JSON), with `raw_status` and `raw_content_type`."""
    raw_status: int = Field(default=200, ge=100, le=599)
    raw_content_type: str = "text/html; charset=utf-8"
    raw_times: int = Field(default=1, ge=0)

    cut_stream_after_events: int | None = Field(default=None, ge=0)
    """Abort the connection after this many SSE events (a network failure)."""
    cut_times: int = Field(default=1, ge=0)

    truncate_after_events: int | None = Field(default=None, ge=0)
    """End the response cleanly after this many SSE events, before `message_stop` (a proxy
    or server that closes the stream early)."""
    truncate_times: int = Field(default=1, ge=0)

    sse_error: bool = False
    sse_error_after_events: int = Field(default=4, ge=0)
    """Where the `event: error` goes; the default lands after the first content delta."""

    event_delay: float = Field(default=0.0, ge=0)
    hang: bool = False
    hang_after_events: int = Field(default=1, ge=0)
    """SSE events sent before hanging; the default sends just `message_start`."""
    keepalive_interval: float | None = Field(default=None, gt=0)
    """While hanging, send a `ping` event this often (the connection never goes quiet)."""
    ping_before_content: float = Field(default=0.0, ge=0)
    """Seconds of pings (every `keepalive_interval`) between `message_start` and the
    content: a local endpoint reading a long prompt on a CPU."""

    chunk_size: int = Field(default=16, ge=1)
    """Characters per text/thinking delta and per `partial_json` piece."""

    @model_validator(mode="after")
    def _check_stop_sequence(self) -> Turn:
        if self.stop_sequence is not None and self.stop_reason is None:
            self.stop_reason = "stop_sequence"
        return self

    @property
    def effective_stop_reason(self) -> StopReason:
        """The scripted stop reason, else what the API would say for this content."""
        if self.stop_reason is not None:
            return self.stop_reason
        has_tool_use = any(isinstance(block, ToolUseBlock) for block in self.content)
        return "tool_use" if has_tool_use else "end_turn"

    @property
    def tool_uses(self) -> list[ToolUseBlock]:
        """The turn's tool calls, handy for asserting on the ids a client must answer."""
        return [block for block in self.content if isinstance(block, ToolUseBlock)]


TurnFactory: TypeAlias = Callable[["RecordedRequest"], "Turn | Mapping[str, Any]"]
"""Computes a turn from the request it answers (e.g. to echo tool results back)."""

TurnLike: TypeAlias = "Turn | Mapping[str, Any] | TurnFactory"


def coerce_turn(value: TurnLike) -> Turn | TurnFactory:
    """Accepts the spellings tests use (models, plain dicts, callables) and normalises them."""
    if isinstance(value, Turn):
        return value
    if isinstance(value, Mapping):
        return Turn.model_validate(dict(value))
    if callable(value):
        return value
    raise TypeError(f"not a turn: {value!r}")


def resolve_turn(entry: Turn | TurnFactory, request: RecordedRequest) -> Turn:
    """Turns a scenario entry into the concrete turn for this request."""
    if isinstance(entry, Turn):
        return entry
    produced = entry(request)
    return produced if isinstance(produced, Turn) else Turn.model_validate(dict(produced))


class _ScenarioFile(_Strict):
    description: str = ""
    turns: list[Turn]


@dataclass
class Scenario:
    """An ordered script of assistant turns, loadable from JSON for out-of-process use."""

    turns: list[Turn | TurnFactory] = field(default_factory=list)
    description: str = ""

    @classmethod
    def of(cls, *turns: TurnLike, description: str = "") -> Scenario:
        """Builds a scenario from turns in any accepted spelling."""
        return cls([coerce_turn(turn) for turn in turns], description)

    @classmethod
    def coerce(cls, value: Scenario | Iterable[TurnLike]) -> Scenario:
        """Lets APIs take either a `Scenario` or a bare list of turns."""
        if isinstance(value, Scenario):
            return value
        return cls.of(*value)

    @classmethod
    def from_json(cls, data: object) -> Scenario:
        """Parses `{"description"?, "turns": [...]}` or a bare JSON list of turns."""
        if isinstance(data, list):
            data = {"turns": data}
        parsed = _ScenarioFile.model_validate(data)
        return cls(list(parsed.turns), parsed.description)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> Scenario:
        """Loads a scenario file (see `from_json` for the format)."""
        return cls.from_json(json.loads(Path(path).read_text(encoding="utf-8")))

    def to_json(self) -> dict[str, object]:
        """Serialises a scenario of static turns, e.g. to hand it to a subprocess."""
        return {"description": self.description, "turns": [_dump_turn(e) for e in self.turns]}


def _dump_turn(entry: Turn | TurnFactory) -> dict[str, object]:
    """Compact dump that still reloads identically: blocks keep their `type` and ids."""
    if not isinstance(entry, Turn):
        raise TypeError("a scenario with callable turns cannot be serialised")
    dumped = entry.model_dump(exclude_defaults=True)
    dumped["content"] = [block.model_dump() for block in entry.content]
    return dumped


def web_search_turn(
    query: str,
    results: list[tuple[str, str]] | str,
    text: str = "",
    **options: Any,
) -> Turn:
    """A turn in which the API searched the web: `server_tool_use`, its
    `web_search_tool_result` ((url, title) pairs, or an error code), then `text`."""
    use = ServerToolUseBlock(input={"query": query})
    content: list[WebSearchResult] | WebSearchError = (
        WebSearchError(error_code=results)
        if isinstance(results, str)
        else [WebSearchResult(url=url, title=title) for url, title in results]
    )
    blocks: list[Any] = [use, WebSearchToolResultBlock(tool_use_id=use.id, content=content)]
    if text:
        blocks.append(TextBlock(text=text))
    return Turn.model_validate({"content": blocks, **options})


def text_turn(text: str, **options: Any) -> Turn:
    """A turn that says `text`; `options` are any other `Turn` fields (faults, usage, ...)."""
    return Turn.model_validate({"content": [TextBlock(text=text)], **options})


ToolCall: TypeAlias = tuple[str, Mapping[str, Any]] | tuple[str, Mapping[str, Any], str]
"""`(name, input)` or `(name, input, id)`."""


def tool_turn(*calls: ToolCall, text: str | None = None, **options: Any) -> Turn:
    """A turn that calls tools, optionally preceded by text, as models usually do."""
    blocks: list[TextBlock | ToolUseBlock] = [TextBlock(text=text)] if text else []
    blocks.extend(_tool_block(call) for call in calls)
    return Turn.model_validate({"content": blocks, **options})


def _tool_block(call: ToolCall) -> ToolUseBlock:
    if len(call) == 3:
        return ToolUseBlock(name=call[0], input=dict(call[1]), id=call[2])
    return ToolUseBlock(name=call[0], input=dict(call[1]))
