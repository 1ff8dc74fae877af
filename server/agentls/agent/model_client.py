"""The model-client protocol and its implementation on `anthropic.AsyncAnthropic`.

The client streams one assistant turn. Retrying is the loop's job (it must tell the host
and discard a half-streamed attempt), so the SDK's own retries are off and this module
only classifies failures as transient or permanent.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import anthropic
import httpx2

from agentls.agent.settings import AgentSettings
from agentls.agent.usage import Usage

log = logging.getLogger(__name__)

# A placeholder key for local endpoints that ignore auth (Ollama, llama.cpp) but whose
# client still needs something to send; never used when a real key is configured.
LOCAL_ENDPOINT_KEY = "agentls-local-endpoint"


@dataclass(frozen=True)
class ModelRequest:
    model: str
    max_tokens: int
    system: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    messages: list[dict[str, Any]]
    temperature: float | None = None

    def params(self) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "system": self.system,
            "messages": self.messages,
        }
        if self.tools:
            params["tools"] = self.tools
        if self.temperature is not None:
            # The SDK's `messages.stream` no longer takes `temperature`; the API still does.
            params["extra_body"] = {"temperature": self.temperature}
        return params


@dataclass(frozen=True)
class ModelResponse:
    content: list[dict[str, Any]]
    stop_reason: str | None
    usage: Usage = field(default_factory=Usage)
    model: str = ""


class ModelError(Exception):
    """A model request failed. `transient` errors are worth retrying."""

    def __init__(self, message: str, *, transient: bool, retry_after: float | None = None):
        super().__init__(message)
        self.transient = transient
        self.retry_after = retry_after


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


class AnthropicModelClient:
    """`ModelClient` over the official SDK's streaming Messages API."""

    def __init__(self, settings: AgentSettings) -> None:
        settings.require_credentials()
        api_key = settings.api_key
        if not (api_key or settings.auth_token):
            api_key = LOCAL_ENDPOINT_KEY
        self._client = anthropic.AsyncAnthropic(
            api_key=api_key,
            auth_token=settings.auth_token,
            base_url=settings.base_url,
            max_retries=0,
            timeout=settings.request_timeout,
        )
        self._can_count = True

    @property
    def base_url(self) -> str:
        return str(self._client.base_url)

    async def stream(self, request: ModelRequest, on_text: Callable[[str], None]) -> ModelResponse:
        try:
            async with self._client.messages.stream(**request.params()) as stream:
                async for event in stream:
                    if event.type == "text":
                        on_text(event.text)
                message = await stream.get_final_message()
        except anthropic.APIStatusError as exc:
            raise _status_error(exc) from exc
        except (anthropic.APIConnectionError, httpx2.TransportError) as exc:
            raise ModelError(
                f"connection to the model endpoint failed: {exc}", transient=True
            ) from exc
        return ModelResponse(
            content=[block_to_param(block) for block in message.content],
            stop_reason=message.stop_reason,
            usage=Usage.from_api(message.usage),
            model=message.model,
        )

    async def count_tokens(self, request: ModelRequest) -> int | None:
        """`POST /v1/messages/count_tokens`; None (and not asked again) where unsupported."""
        if not self._can_count:
            return None
        params = request.params()
        params.pop("max_tokens", None)
        params.pop("extra_body", None)  # the temperature: not a count_tokens field
        try:
            counted = await self._client.messages.count_tokens(**params)
        except anthropic.APIStatusError as exc:
            if exc.status_code in (404, 405, 501):
                self._can_count = False  # e.g. Ollama, llama.cpp: estimate from now on
            log.debug("count_tokens failed: %s", exc)
            return None
        except (anthropic.APIConnectionError, httpx2.TransportError) as exc:
            log.debug("count_tokens failed: %s", exc)
            return None
        tokens = getattr(counted, "input_tokens", None)
        return tokens if isinstance(tokens, int) else None

    async def close(self) -> None:
        await self._client.close()


def block_to_param(block: Any) -> dict[str, Any]:
    """A response block as a request block: null fields dropped (the API rejects some),
    tool input kept verbatim (a null argument there is meaningful)."""
    param: dict[str, Any] = block.model_dump(mode="json", exclude_none=True)
    if param.get("type") == "tool_use":
        param["input"] = block.input
    return param


_TRANSIENT_STATUSES = {408, 409, 429, 500, 502, 503, 504, 529}
_TRANSIENT_STREAM_ERRORS = {"overloaded_error", "api_error", "rate_limit_error"}
_HINTS = {
    401: "the endpoint rejected the credentials; check ANTHROPIC_API_KEY / ANTHROPIC_AUTH_TOKEN",
    403: "the credentials are not allowed to use this model or endpoint",
    404: "the model or endpoint was not found; check AGENTLS_MODEL and ANTHROPIC_BASE_URL",
}


def _status_error(exc: anthropic.APIStatusError) -> ModelError:
    status = exc.status_code
    detail = _error_detail(exc)
    if status == 200:  # an `error` event inside an otherwise successful stream
        kind = _error_type(exc)
        return ModelError(
            f"the stream reported {kind}: {detail}", transient=kind in _TRANSIENT_STREAM_ERRORS
        )
    hint = _HINTS.get(status)
    message = f"model API error {status}: {detail}" + (f" ({hint})" if hint else "")
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
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
    return exc.message


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
