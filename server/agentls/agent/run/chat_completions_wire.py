"""The Chat Completions request body, typed: what `chat_completions.request_body` sends.

Why TypedDicts: the body is plain JSON for `httpx2`, and these make mypy check every key
and role the translation from Messages-API blocks writes (a message without `content`, or
a tool call without its `function`, is a type error instead of a 400 from the endpoint).
The streamed chunks coming back are not typed here: they are untrusted input, read as
`JsonObject` and narrowed field by field.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, NotRequired, TypeAlias, TypedDict


class FunctionCall(TypedDict):
    name: str
    arguments: str
    """The call's input as JSON text (the API's shape, not an object)."""


class ToolCall(TypedDict):
    id: str
    type: Literal["function"]
    function: FunctionCall


class SystemMessage(TypedDict):
    role: Literal["system"]
    content: str


class UserMessage(TypedDict):
    role: Literal["user"]
    content: str


class AssistantMessage(TypedDict):
    role: Literal["assistant"]
    content: str | None
    tool_calls: NotRequired[list[ToolCall]]


class ToolMessage(TypedDict):
    role: Literal["tool"]
    tool_call_id: str
    content: str


ChatMessage: TypeAlias = SystemMessage | UserMessage | AssistantMessage | ToolMessage


class FunctionDefinition(TypedDict):
    name: str
    description: str
    parameters: Mapping[str, object]
    """The tool's JSON Schema, as the Messages API's `input_schema` holds it."""


class FunctionTool(TypedDict):
    type: Literal["function"]
    function: FunctionDefinition


class StreamOptions(TypedDict):
    include_usage: bool


class ChatRequestBody(TypedDict):
    model: str
    max_tokens: int
    messages: list[ChatMessage]
    stream: bool
    stream_options: StreamOptions
    tools: NotRequired[list[FunctionTool]]
    temperature: NotRequired[float]
