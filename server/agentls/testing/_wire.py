"""Renders scripted turns into the Messages API's wire shapes (JSON message, SSE events, errors).

Pure functions with no I/O, so the exact bytes a client sees can be reasoned about (and tested)
apart from the HTTP plumbing.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeAlias

from agentls.testing.recorded import RecordedRequest
from agentls.testing.scenario import (
    ContentBlock,
    RedactedThinkingBlock,
    ServerToolUseBlock,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    Turn,
    WebSearchToolResultBlock,
)

JsonObject: TypeAlias = dict[str, object]
"""A JSON object the fake API sends (built here, so its shape is ours to check)."""
SseEvent: TypeAlias = tuple[str, JsonObject]
"""`(event name, data)`; encoded as `event: NAME\\ndata: JSON\\n\\n`."""

DEFAULT_MODEL = "claude-scripted"

_ERROR_TYPES: dict[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}


def new_message_id() -> str:
    return "msg_01" + uuid.uuid4().hex[:22]


def new_request_id() -> str:
    return "req_01" + uuid.uuid4().hex[:22]


def default_error_type(status: int) -> str:
    """The Anthropic error `type` the real API uses for an HTTP status."""
    if status in _ERROR_TYPES:
        return _ERROR_TYPES[status]
    return "api_error" if status >= 500 else "invalid_request_error"


def error_body(error_type: str, message: str) -> JsonObject:
    """The API's error envelope, which the SDK parses into `APIStatusError.type/.api_message`."""
    return {"type": "error", "error": {"type": error_type, "message": message}}


def encode_sse(name: str, data: Mapping[str, object]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


def estimate_tokens(value: object) -> int:
    """A rough (~4 characters per token) count, good enough for plausible usage figures."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return max(1, len(text) // 4)


def estimate_input_tokens(request: RecordedRequest) -> int:
    """Rough size of what the model would read: system prompt, tools and messages."""
    parts = {
        key: request.json[key] for key in ("system", "tools", "messages") if key in request.json
    }
    return estimate_tokens(parts) if parts else 1


def split_chunks(text: str, size: int) -> list[str]:
    """Cuts text into `size`-character pieces, as a stream delivers it."""
    return [text[start : start + size] for start in range(0, len(text), size)] or [""]


@dataclass(frozen=True)
class RenderContext:
    """Per-response values fixed once so the streamed and final views agree."""

    message_id: str
    model: str
    input_tokens: int
    output_tokens: int
    cache_read_input_tokens: int
    cache_creation_input_tokens: int

    @classmethod
    def for_turn(cls, turn: Turn, request: RecordedRequest) -> RenderContext:
        usage = turn.usage
        return cls(
            message_id=new_message_id(),
            model=turn.model or request.model or DEFAULT_MODEL,
            input_tokens=_or(usage.input_tokens, lambda: estimate_input_tokens(request)),
            output_tokens=_or(usage.output_tokens, lambda: _estimate_output(turn)),
            cache_read_input_tokens=usage.cache_read_input_tokens,
            cache_creation_input_tokens=usage.cache_creation_input_tokens,
            web_search_requests=sum(
                1
                for block in turn.content
                if isinstance(block, ServerToolUseBlock) and block.name == "web_search"
            ),
        )

    web_search_requests: int = 0

    def usage(self, output_tokens: int) -> JsonObject:
        usage: JsonObject = {
            "input_tokens": self.input_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
            "output_tokens": output_tokens,
        }
        if self.web_search_requests:
            usage["server_tool_use"] = {
                "web_search_requests": self.web_search_requests,
                "web_fetch_requests": 0,
            }
        return usage


def _or(value: int | None, fallback: Callable[[], int]) -> int:
    return value if value is not None else fallback()


def _estimate_output(turn: Turn) -> int:
    return estimate_tokens([block_json(block) for block in turn.content])


def block_json(block: ContentBlock) -> JsonObject:
    """A content block as it appears in a final (non-streamed) message."""
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    if isinstance(block, ToolUseBlock):
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    if isinstance(block, RedactedThinkingBlock):
        return {"type": "redacted_thinking", "data": block.data}
    if isinstance(block, ServerToolUseBlock | WebSearchToolResultBlock):
        return block.model_dump(exclude_none=True)
    return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}


def message_json(turn: Turn, ctx: RenderContext, *, streaming: bool = False) -> JsonObject:
    """The `Message` object; when streaming, the empty shell sent in `message_start`."""
    return {
        "id": ctx.message_id,
        "type": "message",
        "role": "assistant",
        "model": ctx.model,
        "content": [] if streaming else [block_json(block) for block in turn.content],
        "stop_reason": None if streaming else turn.effective_stop_reason,
        "stop_sequence": None if streaming else turn.stop_sequence,
        "usage": ctx.usage(min(1, ctx.output_tokens) if streaming else ctx.output_tokens),
    }


def stream_events(turn: Turn, ctx: RenderContext) -> list[SseEvent]:
    """The full SSE sequence: message_start, ping, per-block start/deltas/stop, delta, stop."""
    events: list[SseEvent] = [
        (
            "message_start",
            {"type": "message_start", "message": message_json(turn, ctx, streaming=True)},
        ),
        ("ping", {"type": "ping"}),
    ]
    for index, block in enumerate(turn.content):
        events.extend(block_events(index, block, turn.chunk_size))
    events.append(("message_delta", _message_delta(turn, ctx)))
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def _message_delta(turn: Turn, ctx: RenderContext) -> JsonObject:
    """Carries the stop reason and cumulative usage, as the current API does."""
    return {
        "type": "message_delta",
        "delta": {"stop_reason": turn.effective_stop_reason, "stop_sequence": turn.stop_sequence},
        "usage": ctx.usage(ctx.output_tokens),
    }


def block_events(index: int, block: ContentBlock, chunk_size: int) -> list[SseEvent]:
    """`content_block_start`, the block's deltas, `content_block_stop`."""
    start: SseEvent = (
        "content_block_start",
        {"type": "content_block_start", "index": index, "content_block": _block_shell(block)},
    )
    deltas = [_delta_event(index, delta) for delta in _deltas(block, chunk_size)]
    stop: SseEvent = ("content_block_stop", {"type": "content_block_stop", "index": index})
    return [start, *deltas, stop]


def _block_shell(block: ContentBlock) -> JsonObject:
    """The block as first announced, before any delta has filled it in."""
    if isinstance(block, TextBlock):
        return {"type": "text", "text": ""}
    if isinstance(block, ToolUseBlock):
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": {}}
    if isinstance(block, RedactedThinkingBlock):
        return {"type": "redacted_thinking", "data": block.data}  # complete at start
    if isinstance(block, ServerToolUseBlock):
        return {"type": "server_tool_use", "id": block.id, "name": block.name, "input": {}}
    if isinstance(block, WebSearchToolResultBlock):
        return block.model_dump(exclude_none=True)  # arrives whole, with no deltas
    return {"type": "thinking", "thinking": "", "signature": ""}


def _deltas(block: ContentBlock, chunk_size: int) -> list[JsonObject]:
    if isinstance(block, TextBlock):
        return [{"type": "text_delta", "text": c} for c in split_chunks(block.text, chunk_size)]
    if isinstance(block, ToolUseBlock | ServerToolUseBlock):
        pieces = split_chunks(json.dumps(block.input), chunk_size)
        return [{"type": "input_json_delta", "partial_json": piece} for piece in pieces]
    if isinstance(block, RedactedThinkingBlock) or not isinstance(block, ThinkingBlock):
        return []
    pieces = split_chunks(block.thinking, chunk_size)
    thinking: list[JsonObject] = [{"type": "thinking_delta", "thinking": p} for p in pieces]
    return [*thinking, {"type": "signature_delta", "signature": block.signature}]


def _delta_event(index: int, delta: JsonObject) -> SseEvent:
    return ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})
