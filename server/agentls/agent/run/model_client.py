"""The model-client protocol and its implementation on `anthropic.AsyncAnthropic`.

The client streams one assistant turn. Retrying is the loop's job (it must tell the host
and discard a half-streamed attempt), so the SDK's own retries are off and this module
only classifies failures as transient or permanent.

A turn is accepted only when its stream ends with `message_stop`: a stream that closes
early is a dropped connection (transient), whatever the SDK pieced together from it, so
a half-streamed `tool_use` is never executed. A body that is not an event stream (an HTML
error page, some other JSON) fails with the endpoint, the status and its first bytes. A
stall detector ends an attempt that gets no content for `stall_timeout` seconds even while
the endpoint keeps the connection alive with pings (the HTTP read timeout never fires then).

Credentials and headers (`sdk_client`): the key or token is sent the way `authHeader` says
(`Authorization: Bearer`, `x-api-key`, or both), custom `headers` go with every request,
and an `apiKeyHelper` supplies the key when the environment has none (fetched again after
its time to live or a 401). Extended thinking (`thinkingBudget`) adds `thinking` to the
turn's request; thinking blocks come back as `thinking` / `redacted_thinking` params with
their signatures and stay in the history unchanged.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import anthropic
import httpx2
import pydantic
from anthropic.lib.streaming import AsyncMessageStream
from anthropic.types import ThinkingConfigEnabledParam

from agentls import credentials
from agentls.agent.protocol.messages import (
    ContentBlockParam,
    History,
    JsonObject,
    TextBlockParam,
    ToolUnionParam,
)
from agentls.agent.protocol.pricing import is_anthropic_endpoint
from agentls.agent.protocol.usage import Usage
from agentls.agent.run.api_key_helper import ApiKeyHelper, ApiKeyHelperError
from agentls.agent.settings import AgentSettings

log = logging.getLogger(__name__)

# A placeholder key for local endpoints that ignore auth (Ollama, llama.cpp) but whose
# client still needs something to send; never used when a real key is configured.
LOCAL_ENDPOINT_KEY = "agentls-local-endpoint"
BODY_PREVIEW_BYTES = 200
_MALFORMED = (AssertionError, RuntimeError, TypeError, ValueError, pydantic.ValidationError)
"""What the SDK raises when a body is not a Messages API stream."""
"""How much of an unexpected body an error message quotes."""


@dataclass(frozen=True)
class ModelRequest:
    model: str
    max_tokens: int
    system: list[TextBlockParam]
    tools: list[ToolUnionParam]
    messages: History
    temperature: float | None = None
    thinking_budget: int | None = None
    """Extended thinking with this many tokens (None: off); see `thinking_params`."""

    def counted_part(self) -> JsonObject:
        """What the input-token count covers (for estimates)."""
        return {"system": self.system, "tools": self.tools, "messages": self.messages}


@dataclass(frozen=True)
class ModelResponse:
    content: list[ContentBlockParam]
    stop_reason: str | None
    usage: Usage = field(default_factory=Usage)
    model: str = ""


class ModelError(Exception):
    """A model request failed. `transient` errors are worth retrying."""

    def __init__(self, message: str, *, transient: bool, retry_after: float | None = None):
        super().__init__(message)
        self.transient = transient
        self.retry_after = retry_after
        self.status: int | None = None
        """The HTTP status, when the endpoint answered with an error."""


def ignore_text(text: str) -> None:
    """An `on_text` for requests whose text nobody watches (a compaction's summary)."""
    del text


@dataclass(frozen=True)
class ServerToolEvent:
    """A tool the API runs itself (web search) started or finished inside the stream."""

    tool_use_id: str
    name: str
    input: JsonObject
    finished: bool = False
    is_error: bool = False


ServerToolListener = Callable[[ServerToolEvent], None]


@runtime_checkable
class ServerToolReporter(Protocol):
    """Optional `ModelClient` capability: `stream` that also reports server tools as they
    run (a search takes seconds; the user sees it in progress, not only afterwards)."""

    async def stream_reporting(
        self,
        request: ModelRequest,
        on_text: Callable[[str], None],
        on_server_tool: ServerToolListener,
    ) -> ModelResponse: ...


class ModelClient(Protocol):
    async def stream(self, request: ModelRequest, on_text: Callable[[str], None]) -> ModelResponse:
        """Stream one assistant turn, calling `on_text` per text delta; raise `ModelError`."""
        ...

    async def close(self) -> None: ...


@runtime_checkable
class TokenCounter(Protocol):
    """Optional `ModelClient` capability: the endpoint's own count of a request's input tokens.

    Kept out of `ModelClient` itself so minimal clients (test doubles, the host's stand-in
    for a session that cannot start) stay valid; use `count_request_tokens`.
    """

    async def count_tokens(self, request: ModelRequest) -> int | None:
        """Input tokens of `request`, or None when the endpoint cannot count."""
        ...


async def count_request_tokens(client: object, request: ModelRequest) -> int | None:
    """The client's exact count when it has one; None means "estimate instead"."""
    if not isinstance(client, TokenCounter):
        return None
    try:
        return await client.count_tokens(request)
    except Exception as exc:  # counting is an optimisation: never fatal
        log.debug("token counting failed: %s", exc)
        return None


MIN_ANSWER_TOKENS = 4096
"""With thinking on, `max_tokens` is at least the budget plus this (the API requires the
budget to be below `max_tokens`, and the answer needs room after the thinking)."""


def sdk_client(settings: AgentSettings, helper_key: str | None = None) -> anthropic.AsyncAnthropic:
    """The SDK client for these settings (see `client_options`)."""
    return anthropic.AsyncAnthropic(**client_options(settings, helper_key))


def client_options(settings: AgentSettings, helper_key: str | None = None) -> dict[str, Any]:
    """The SDK client's options: credential header(s) per `authHeader`, custom `headers`,
    no SDK retries, the request timeout. `helper_key` is an `apiKeyHelper`'s key."""
    credential = settings.api_key or settings.auth_token or helper_key or LOCAL_ENDPOINT_KEY
    mode = settings.auth_header
    if mode == "auto":
        from_helper = helper_key and not (settings.api_key or settings.auth_token)
        mode = "both" if from_helper else "bearer"
    headers: dict[str, object] = dict(settings.headers)
    for value in settings.headers.values():
        credentials.remember_secret(value)  # a gateway token in a header is a credential too
    if mode in ("x-api-key", "both"):
        headers["x-api-key"] = credential
    if mode == "x-api-key":
        headers["Authorization"] = anthropic.omit
    return {
        "api_key": credential,
        "base_url": settings.base_url,
        "max_retries": 0,
        "timeout": settings.request_timeout,
        "default_headers": headers,  # `omit` drops Authorization
    }


class AnthropicModelClient:
    """`ModelClient` over the official SDK's streaming Messages API."""

    def __init__(self, settings: AgentSettings) -> None:
        settings.require_credentials()
        self._settings = settings
        has_key = bool(settings.api_key or settings.auth_token)
        helper = settings.api_key_helper
        self._helper = ApiKeyHelper(helper) if helper and not has_key else None
        self._helper_key: str | None = None
        self._client = sdk_client(settings)
        self._stall_timeout = settings.stall_timeout
        self._local = not is_anthropic_endpoint(settings.base_url)
        self._can_count = True

    @property
    def base_url(self) -> str:
        return str(self._client.base_url)

    async def _current_client(self, *, refresh: bool = False) -> anthropic.AsyncAnthropic:
        """The client with the helper's current key (a new client when the key changed)."""
        if self._helper is None:
            return self._client
        try:
            key = await self._helper.key(refresh=refresh)
        except ApiKeyHelperError as exc:
            raise ModelError(str(exc), transient=False) from exc
        if key != self._helper_key:
            await self._client.close()
            self._client = sdk_client(self._settings, key)
            self._helper_key = key
        return self._client

    async def stream(self, request: ModelRequest, on_text: Callable[[str], None]) -> ModelResponse:
        return await self.stream_reporting(request, on_text, _ignore_server_tool)

    async def stream_reporting(
        self,
        request: ModelRequest,
        on_text: Callable[[str], None],
        on_server_tool: ServerToolListener,
    ) -> ModelResponse:
        try:
            client = await self._current_client()
            return await self._stream(request, on_text, on_server_tool, client)
        except ModelError as exc:
            if self._helper is None or exc.status != 401:
                raise
        # the helper's key was refused: fetch a new one and try once more
        client = await self._current_client(refresh=True)
        return await self._stream(request, on_text, on_server_tool, client)

    async def _stream(
        self,
        request: ModelRequest,
        on_text: Callable[[str], None],
        on_server_tool: ServerToolListener,
        client: anthropic.AsyncAnthropic,
    ) -> ModelResponse:
        thinking = thinking_params(request)
        try:
            async with client.messages.stream(
                model=request.model,
                max_tokens=thinking.max_tokens,
                system=request.system,
                messages=request.messages,
                tools=request.tools or anthropic.omit,
                thinking=thinking.param or anthropic.omit,
                extra_body=_extra_body(request),
            ) as stream:
                await _require_event_stream(stream.response, self.base_url)
                message = await self._read(stream, on_text, on_server_tool)
        except anthropic.APIStatusError as exc:
            raise _status_error(exc, self.base_url) from exc
        except (anthropic.APIConnectionError, httpx2.TransportError) as exc:
            raise ModelError(
                f"connection to the model endpoint {self.base_url} failed: {exc}", transient=True
            ) from exc
        except _MALFORMED as exc:  # the SDK could not make a message of what came back
            raise ModelError(
                f"the model endpoint {self.base_url} sent a stream that is not a Messages API "
                f"response ({type(exc).__name__}: {_short(str(exc))})",
                transient=False,
            ) from exc
        return ModelResponse(
            content=[block_to_param(block) for block in message.content],
            stop_reason=message.stop_reason,
            usage=Usage.from_api(message.usage),
            model=message.model,
        )

    async def _read(
        self,
        stream: AsyncMessageStream[None],
        on_text: Callable[[str], None],
        on_server_tool: ServerToolListener = lambda event: None,
    ) -> anthropic.types.Message:
        """Consume the events; only a stream that reaches `message_stop` yields a message."""
        loop = asyncio.get_running_loop()
        stall = self._stall_timeout or None
        events = 0
        stopped = False
        # A local endpoint (llama.cpp on a CPU) sends only pings while it reads a long
        # prompt, which can take minutes: until the first content, any bytes (pings
        # included) count as alive there. Anthropic's endpoint answers in seconds, so
        # there only content counts from the start.
        content = False
        try:
            async with asyncio.timeout_at(stall and loop.time() + stall) as watchdog:
                if stall and self._local:

                    def alive() -> None:
                        if not content:
                            watchdog.reschedule(loop.time() + stall)

                    _watch_bytes(stream.response, alive)
                async for event in stream:
                    events += 1
                    content = content or event.type != "message_start"
                    if stall:
                        watchdog.reschedule(loop.time() + stall)
                    if event.type == "text":
                        on_text(event.text)
                    elif event.type == "message_stop":
                        stopped = True
                    elif event.type in ("content_block_start", "content_block_stop"):
                        _report_server_tool(event.content_block, event.type, on_server_tool)
        except TimeoutError:
            raise ModelError(
                f"the model endpoint {self.base_url} sent no content for {stall:g} s "
                "(the stall timeout: setting stallTimeout, AGENTLS_STALL_TIMEOUT); the partial "
                "response was discarded",
                transient=True,
            ) from None
        if not stopped:
            raise ModelError(
                f"the stream from {self.base_url} ended before `message_stop` (after {events} "
                "events): a dropped connection; the partial response was discarded",
                transient=True,
            )
        message: anthropic.types.Message = stream.current_message_snapshot
        return message

    async def count_tokens(self, request: ModelRequest) -> int | None:
        """`POST /v1/messages/count_tokens`; None (and not asked again) where unsupported."""
        if not self._can_count:
            return None
        try:
            client = await self._current_client()
            counted = await client.messages.count_tokens(
                model=request.model,
                system=request.system,
                messages=request.messages,
                tools=request.tools or anthropic.omit,
            )
        except anthropic.APIStatusError as exc:
            if exc.status_code in (404, 405, 501):
                self._can_count = False  # e.g. Ollama, llama.cpp: estimate from now on
            log.debug("count_tokens failed: %s", exc)
            return None
        except (anthropic.APIConnectionError, httpx2.TransportError) as exc:
            log.debug("count_tokens failed: %s", exc)
            return None
        except (pydantic.ValidationError, ValueError, TypeError) as exc:
            log.debug("count_tokens answered something else: %s", exc)
            return None
        except ModelError as exc:  # the apiKeyHelper failed: the turn will say so
            log.debug("count_tokens skipped: %s", exc)
            return None
        tokens = getattr(counted, "input_tokens", None)
        return tokens if isinstance(tokens, int) else None

    async def close(self) -> None:
        await self._client.close()


@dataclass(frozen=True)
class ThinkingParams:
    param: ThinkingConfigEnabledParam | None
    max_tokens: int


def thinking_params(request: ModelRequest) -> ThinkingParams:
    """`thinking` for the request (None when off) and the `max_tokens` that goes with it."""
    budget = request.thinking_budget
    if not budget:
        return ThinkingParams(None, request.max_tokens)
    param: ThinkingConfigEnabledParam = {"type": "enabled", "budget_tokens": budget}
    return ThinkingParams(param, max(request.max_tokens, budget + MIN_ANSWER_TOKENS))


def _extra_body(request: ModelRequest) -> dict[str, object] | None:
    """Request fields this SDK version has no keyword for (sent as they are). No
    temperature with thinking: the API accepts only the default then."""
    if request.temperature is None or request.thinking_budget:
        return None
    return {"temperature": request.temperature}


class _Heartbeat(httpx2.AsyncByteStream):
    """A response body that calls `beat` for every chunk read (pings included), which the
    SDK's event stream never shows."""

    def __init__(self, inner: Any, beat: Callable[[], None]) -> None:
        self._inner = inner
        self._beat = beat

    async def __aiter__(self) -> Any:
        async for chunk in self._inner:
            self._beat()
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


def _watch_bytes(response: httpx2.Response, beat: Callable[[], None]) -> None:
    response.stream = _Heartbeat(response.stream, beat)


def _ignore_server_tool(event: ServerToolEvent) -> None:
    del event


def _report_server_tool(block: object, kind: str, listener: ServerToolListener) -> None:
    """A server tool's use once its input is complete; its result when the block starts
    (result blocks arrive whole)."""
    block_type = getattr(block, "type", "")
    if block_type == "server_tool_use" and kind == "content_block_stop":
        raw = getattr(block, "input", {})
        listener(
            ServerToolEvent(
                str(getattr(block, "id", "")),
                str(getattr(block, "name", "")),
                dict(raw) if isinstance(raw, dict) else {},
            )
        )
    elif block_type.endswith("_tool_result") and kind == "content_block_start":
        content = getattr(block, "content", None)
        failed = str(getattr(content, "type", "")).endswith("_error")
        name = block_type.removesuffix("_tool_result")
        listener(ServerToolEvent(str(getattr(block, "tool_use_id", "")), name, {}, True, failed))


def block_to_param(block: anthropic.types.ContentBlock) -> ContentBlockParam:
    """A response block as a request block: null fields dropped (the API rejects some),
    tool input kept verbatim (a null argument there is meaningful)."""
    param = block.model_dump(mode="json", exclude_none=True)
    if block.type == "tool_use":
        param["input"] = block.input
    return param  # type: ignore[return-value]  # the dump of a block is its param shape


async def _require_event_stream(response: httpx2.Response, endpoint: str) -> None:
    """An event stream, or a `ModelError` quoting what came instead (HTML, other JSON)."""
    content_type = response.headers.get("content-type", "")
    if not content_type or "text/event-stream" in content_type:
        return  # (a server that names no type gets the benefit of the doubt)
    head = b""
    async for chunk in response.aiter_bytes():
        head += chunk
        if len(head) >= BODY_PREVIEW_BYTES:
            break
    raise ModelError(
        f"the model endpoint {endpoint} answered HTTP {response.status_code} with "
        f"{content_type or 'no content type'} instead of an event stream; the body starts: "
        f"{_preview(head)!r}. Check ANTHROPIC_BASE_URL: it must point at a Messages API.",
        transient=False,
    )


def _preview(data: bytes | str) -> str:
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    return _short(" ".join(text.split()), BODY_PREVIEW_BYTES)


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


_TRANSIENT_STATUSES = {408, 409, 429, 500, 502, 503, 504, 529}
_TRANSIENT_STREAM_ERRORS = {"overloaded_error", "api_error", "rate_limit_error"}
_HINTS = {
    401: "the endpoint rejected the credentials; check ANTHROPIC_API_KEY / ANTHROPIC_AUTH_TOKEN",
    403: "the credentials are not allowed to use this model or endpoint",
    404: "the model or endpoint was not found; check AGENTLS_MODEL and ANTHROPIC_BASE_URL",
}


def _status_error(exc: anthropic.APIStatusError, endpoint: str) -> ModelError:
    error = _status_error_of(exc, endpoint)
    error.status = exc.status_code
    return error


def _status_error_of(exc: anthropic.APIStatusError, endpoint: str) -> ModelError:
    status = exc.status_code
    detail = _error_detail(exc)
    if status == 200:  # an `error` event inside an otherwise successful stream
        kind = _error_type(exc)
        return ModelError(
            f"the stream reported {kind}: {detail}", transient=kind in _TRANSIENT_STREAM_ERRORS
        )
    hint = _HINTS.get(status)
    message = f"model API error {status} from {endpoint}: {detail}" + (f" ({hint})" if hint else "")
    return ModelError(
        message, transient=status in _TRANSIENT_STATUSES, retry_after=_retry_after(exc)
    )


def _error_type(exc: anthropic.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and isinstance(error.get("type"), str):
            return str(error["type"])
    return "error"


def _error_detail(exc: anthropic.APIStatusError) -> str:
    """The API's error message; for a body that is not the API's error JSON (a proxy's HTML
    page), its content type and first bytes rather than the whole page."""
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
    content_type = exc.response.headers.get("content-type", "")
    if "json" not in content_type:
        try:
            text = exc.response.text
        except Exception:  # a streamed body that was not read
            text = ""
        if text:
            kind = content_type.split(";")[0] or "a body"
            return f"{kind} that starts {_preview(text)!r}"
    return _short(exc.message)


def _retry_after(exc: anthropic.APIStatusError) -> float | None:
    headers = exc.response.headers
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value:
            try:
                return float(value) * scale
            except ValueError:
                continue
    return None
