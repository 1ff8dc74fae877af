"""A `ModelClient` for OpenAI-compatible `/v1/chat/completions` endpoints (`model.api`).

Why: llama.cpp's server, vLLM, Ollama and LM Studio all speak Chat Completions; some
speak nothing else. The loop keeps Anthropic's shapes (the history is Messages-API blocks):
this client translates a `ModelRequest` into a Chat Completions body and the streamed
chunks back into a `ModelResponse` — text, `tool_use` blocks from `tool_calls`, the stop
reason and the usage (`stream_options.include_usage`).

Built on `httpx2` directly rather than the `openai` SDK: the wire protocol is small (one POST,
server-sent `data:` lines), agentls already depends on httpx2 (the Anthropic SDK's HTTP
stack), and a second SDK would bring a second HTTP stack with its own retry and timeout
behaviour that the loop would have to switch off again.

Like the Messages client: retries are the loop's, a stream that ends before `[DONE]` (or a
final `finish_reason`) is a dropped connection, and an attempt that receives nothing for
`stallTimeout` seconds is dropped — any line counts as alive, including the keep-alive
comments a CPU endpoint sends while it reads a long prompt.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import TypeGuard

import httpx2

from agentls import credentials
from agentls.agent.protocol.messages import (
    ContentBlockParam,
    JsonObject,
    MessageParam,
    ToolParam,
    ToolResultBlockParam,
    ToolUnionParam,
    blocks_of,
)
from agentls.agent.protocol.usage import Usage
from agentls.agent.run.chat_completions_wire import (
    AssistantMessage,
    ChatMessage,
    ChatRequestBody,
    FunctionTool,
    ToolCall,
)
from agentls.agent.run.model_client import (
    LOCAL_ENDPOINT_KEY,
    ModelError,
    ModelRequest,
    ModelResponse,
)
from agentls.agent.settings import AgentSettings

_TRANSIENT = {408, 409, 429, 500, 502, 503, 504, 529}
_STOP = {"tool_calls": "tool_use", "function_call": "tool_use", "length": "max_tokens"}


def endpoint_url(base_url: str | None) -> str:
    """`…/v1/chat/completions` for a base URL given with or without `/v1`."""
    base = (base_url or "http://127.0.0.1:8080").rstrip("/")
    if base.endswith("/chat/completions"):
        return base
    if not base.endswith("/v1"):
        base += "/v1"
    return base + "/chat/completions"


class ChatCompletionsClient:
    """`ModelClient` over a streaming Chat Completions endpoint."""

    def __init__(self, settings: AgentSettings) -> None:
        self._settings = settings
        self.url = endpoint_url(settings.base_url)
        key = settings.api_key or settings.auth_token or LOCAL_ENDPOINT_KEY
        headers = {"Authorization": f"Bearer {key}", **settings.headers}
        for value in settings.headers.values():
            credentials.remember_secret(value)
        self._client = httpx2.AsyncClient(
            headers=headers, timeout=httpx2.Timeout(settings.request_timeout)
        )

    async def stream(self, request: ModelRequest, on_text: Callable[[str], None]) -> ModelResponse:
        body = request_body(request)
        try:
            async with self._client.stream("POST", self.url, json=body) as response:
                await self._check(response)
                return await self._read(response, on_text, request.model)
        except httpx2.TransportError as exc:
            raise ModelError(
                f"connection to the model endpoint {self.url} failed: {exc}", transient=True
            ) from exc

    async def _check(self, response: httpx2.Response) -> None:
        if response.status_code < 400:
            return
        text = (await response.aread()).decode("utf-8", "replace")
        error = ModelError(
            f"model API error {response.status_code} from {self.url}: {_detail(text)}",
            transient=response.status_code in _TRANSIENT,
        )
        error.status = response.status_code
        raise error

    async def _read(
        self, response: httpx2.Response, on_text: Callable[[str], None], model: str
    ) -> ModelResponse:
        stall = self._settings.stall_timeout or None
        loop = asyncio.get_running_loop()
        turn = _Turn(model=model)
        try:
            async with asyncio.timeout_at(stall and loop.time() + stall) as watchdog:
                async for data in _events(response.aiter_lines()):
                    if stall:
                        watchdog.reschedule(loop.time() + stall)
                    if data is None:
                        continue  # a keep-alive: the endpoint is still reading the prompt
                    if data == "[DONE]":
                        turn.done = True
                        break
                    turn.add(_chunk(data, self.url), on_text)
        except TimeoutError:
            raise ModelError(
                f"the model endpoint {self.url} sent nothing for {stall:g} s (the stall "
                "timeout: setting stallTimeout); the partial response was discarded",
                transient=True,
            ) from None
        if not (turn.done or turn.finish):
            raise ModelError(
                f"the stream from {self.url} ended before its end marker: a dropped "
                "connection; the partial response was discarded",
                transient=True,
            )
        return turn.response()

    async def close(self) -> None:
        await self._client.aclose()


async def _events(lines: AsyncIterator[str]) -> AsyncIterator[str | None]:
    """Each `data:` payload; None for any other line (comments, pings, blanks)."""
    async for line in lines:
        yield line[5:].strip() if line.startswith("data:") else None


def _chunk(data: str, url: str) -> JsonObject:
    try:
        value = json.loads(data)
    except ValueError:
        raise ModelError(
            f"the model endpoint {url} sent a line that is not JSON: {data[:200]!r}",
            transient=False,
        ) from None
    if not isinstance(value, dict):
        raise ModelError(f"the model endpoint {url} sent {data[:200]!r}", transient=False)
    if "error" in value:
        raise ModelError(f"the stream reported an error: {_detail(data)}", transient=True)
    return value


@dataclass
class _Call:
    id: str = ""
    name: str = ""
    arguments: str = ""


@dataclass
class _Turn:
    """The chunks of one streamed reply, assembled."""

    model: str
    text: list[str] = field(default_factory=list)
    calls: dict[int, _Call] = field(default_factory=dict)
    finish: str | None = None
    usage: Usage = field(default_factory=Usage)
    done: bool = False

    def add(self, chunk: JsonObject, on_text: Callable[[str], None]) -> None:
        if isinstance(chunk.get("model"), str) and chunk["model"]:
            self.model = str(chunk["model"])
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            self.usage = _usage(usage)
        choices = chunk.get("choices")
        for choice in choices if isinstance(choices, list) else []:
            if not isinstance(choice, dict):
                continue
            delta = choice.get("delta") or choice.get("message") or {}
            if isinstance(delta.get("content"), str) and delta["content"]:
                self.text.append(delta["content"])
                on_text(delta["content"])
            for call in delta.get("tool_calls") or []:
                self._add_call(call)
            if choice.get("finish_reason"):
                self.finish = str(choice["finish_reason"])

    def _add_call(self, call: object) -> None:
        if not isinstance(call, dict):
            return
        index = call.get("index", len(self.calls))
        slot = self.calls.setdefault(int(index), _Call())
        slot.id = call.get("id") or slot.id
        function = call.get("function") or {}
        slot.name += function.get("name") or ""
        slot.arguments += function.get("arguments") or ""

    def response(self) -> ModelResponse:
        content: list[ContentBlockParam] = []
        text = "".join(self.text)
        if text:
            content.append({"type": "text", "text": text})
        for index, call in sorted(self.calls.items()):
            content.append(
                {
                    "type": "tool_use",
                    "id": call.id or f"call_{index}",
                    "name": call.name,
                    "input": _arguments(call.arguments),
                }
            )
        stop = _STOP.get(self.finish or "", "end_turn")
        if self.calls:
            stop = "tool_use"
        return ModelResponse(content, stop, self.usage, self.model)


def _arguments(text: str) -> JsonObject:
    """A call's arguments; text that is not a JSON object is passed on under a key the
    schema rejects, so the model gets a validation error it can act on."""
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return {"arguments_not_json": text}
    return value if isinstance(value, dict) else {"arguments_not_an_object": value}


def _usage(raw: Mapping[object, object]) -> Usage:
    prompt = _count(raw.get("prompt_tokens"))
    details = raw.get("prompt_tokens_details")
    cached = _count(details.get("cached_tokens")) if isinstance(details, dict) else 0
    return Usage(
        input_tokens=max(prompt - cached, 0),
        output_tokens=_count(raw.get("completion_tokens")),
        cache_read_input_tokens=cached,
    )


def _count(value: object) -> int:
    """A token count from the usage object (missing, null or not a number: 0)."""
    if isinstance(value, int | float | str) and value:
        return int(value)
    return 0


def _detail(text: str) -> str:
    try:
        value = json.loads(text)
    except ValueError:
        return " ".join(text.split())[:300]
    error = value.get("error", value) if isinstance(value, dict) else value
    if isinstance(error, dict) and error.get("message"):
        return str(error["message"])
    return json.dumps(error)[:300]


# --- the request -----------------------------------------------------------------------


def request_body(request: ModelRequest) -> ChatRequestBody:
    """The Chat Completions body for a Messages-API shaped request."""
    system = "\n\n".join(block["text"] for block in request.system)
    messages: list[ChatMessage] = [{"role": "system", "content": system}] if system else []
    for message in request.messages:
        messages.extend(_messages_of(message))
    body: ChatRequestBody = {
        "model": request.model,
        "max_tokens": request.max_tokens,
        "messages": messages,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    tools = [_function(tool) for tool in request.tools]
    if any(tools):
        body["tools"] = [t for t in tools if t]
    if request.temperature is not None:
        body["temperature"] = request.temperature
    return body


def _function(tool: ToolUnionParam) -> FunctionTool | None:
    """A client tool as a function; the API's own tools (web search) have no equivalent."""
    if not _is_client_tool(tool):
        return None
    return {
        "type": "function",
        "function": {
            "name": tool["name"],
            "description": tool.get("description", ""),
            "parameters": tool["input_schema"],
        },
    }


def _is_client_tool(tool: ToolUnionParam) -> TypeGuard[ToolParam]:
    return isinstance(tool, dict) and "input_schema" in tool


def _messages_of(message: MessageParam) -> list[ChatMessage]:
    content = message["content"]
    if message["role"] == "assistant":
        if isinstance(content, str):
            return [{"role": "assistant", "content": content}]
        return [_assistant(blocks_of(message))]
    if isinstance(content, str):
        return [{"role": "user", "content": content}]
    out: list[ChatMessage] = []
    texts: list[str] = []
    for block in blocks_of(message):
        if block["type"] == "tool_result":
            out.append(
                {
                    "role": "tool",
                    "tool_call_id": block["tool_use_id"],
                    "content": _result_text(block),
                }
            )
        elif block["type"] == "text":
            texts.append(block["text"])
        elif block["type"] in ("image", "document"):
            texts.append(f"[{block['type']} not sent: this endpoint takes text only]")
    if texts:
        out.append({"role": "user", "content": "\n\n".join(texts)})
    return out


def _assistant(content: list[ContentBlockParam]) -> AssistantMessage:
    texts = [b["text"] for b in content if b["type"] == "text"]
    calls: list[ToolCall] = [
        {
            "id": b["id"],
            "type": "function",
            "function": {"name": b["name"], "arguments": json.dumps(b.get("input") or {})},
        }
        for b in content
        if b["type"] == "tool_use"
    ]
    message: AssistantMessage = {"role": "assistant", "content": "\n\n".join(texts) or None}
    if calls:
        message["tool_calls"] = calls
    return message


def _result_text(block: ToolResultBlockParam) -> str:
    content = block.get("content")
    if isinstance(content, str):
        text = content
    else:
        parts = [p["text"] for p in content or [] if isinstance(p, dict) and p["type"] == "text"]
        text = "\n".join(p for p in parts if p)
    return f"Error: {text}" if block.get("is_error") else text
