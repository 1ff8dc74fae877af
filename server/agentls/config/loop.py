"""The model and the agent loop: which model, how much it may do, retries, compaction."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import AfterValidator, Field, field_validator, model_validator

from agentls.config.base import SettingsModel, meta

if TYPE_CHECKING:
    from pydantic import GetJsonSchemaHandler
    from pydantic.json_schema import JsonSchemaValue
    from pydantic_core import CoreSchema

DEFAULT_MODEL = "claude-sonnet-5-5"


def _non_negative(value: float) -> float:
    if value < 0:
        raise ValueError(f"{value!r} is not a non-negative number")
    return value


Price = Annotated[float, AfterValidator(_non_negative)]


class PriceSetting(SettingsModel):
    """USD per million tokens for the models whose id starts with a prefix. Written as
    `{"input": 3, "output": 15}` (cache prices optional) or `[input, output]` /
    `[input, output, cache_read, cache_write]`."""

    input: Price
    output: Price
    cache_read: Price | None = Field(default=None, alias="cache_read")
    """Default: 0.1 × input."""
    cache_write: Price | None = Field(default=None, alias="cache_write")
    """Default: 1.25 × input (5-minute cache writes)."""

    @model_validator(mode="before")
    @classmethod
    def _from_list(cls, value: Any) -> Any:
        if isinstance(value, list | tuple) and len(value) in (2, 4):
            names = ("input", "output", "cache_read", "cache_write")
            return dict(zip(names, value, strict=False))
        if isinstance(value, dict) and "input" in value and "output" in value:
            return value
        raise ValueError(
            "a price must be {'input': N, 'output': N[, 'cache_read': N, 'cache_write': N]} "
            "or a list [input, output(, cache_read, cache_write)]"
        )


class _PriceEntrySchema:
    """The JSON Schema of a price entry: the object or the list form. Built when a schema is
    generated, not at import (every server start would pay for it)."""

    def __get_pydantic_json_schema__(
        self, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        as_list = {"type": "array", "items": {"type": "number", "minimum": 0}}
        return {
            "anyOf": [PriceSetting.model_json_schema(), as_list | {"minItems": 2, "maxItems": 4}]
        }


PriceEntry = Annotated[PriceSetting, _PriceEntrySchema()]
"""A price: the object, or the list form `[input, output(, cache_read, cache_write)]`."""


ToolCallsMode = Literal["auto", "native", "text"]
ModelApi = Literal["messages", "chat-completions"]
ToolsProfile = Literal["auto", "full", "compact"]


class ToolsSettings(SettingsModel):
    """Which tool definitions and workspace overview the model gets (`tools.*`)."""

    profile: ToolsProfile = Field(default="auto")
    """`full`: every tool with its long description; `compact`: a smaller default set with
    short descriptions (tools + system prompt under 3k tokens), for small local models;
    `auto`: compact when the context window is at most `compactBelow` tokens."""
    compact_below: int = Field(default=32_768, ge=0)
    """The context window (tokens) at or under which `auto` picks the compact profile."""
    overview: bool = True
    """Put a workspace overview (files and a ranked map of their symbols, sized to the
    context) in the first request, so the model knows what exists before it calls a tool."""


class LoopSettings(SettingsModel):
    """Model and loop settings: each can also come from its environment variable."""

    @model_validator(mode="before")
    @classmethod
    def _model_as_object(cls, value: Any) -> Any:
        """`model` may be an object `{id, toolCalls, api}` (the `model.toolCalls` and
        `model.api` settings), and those may come as dotted keys (`"model.toolCalls"`)."""
        if not isinstance(value, dict):
            return value
        value = dict(value)
        model = value.get("model")
        if isinstance(model, dict):
            model = dict(model)
            model_id = model.pop("id", None) or model.pop("name", None)
            if model_id is not None:
                value["model"] = model_id
            else:
                value.pop("model")
            for key, target in (("toolCalls", "toolCalls"), ("api", "api")):
                if key in model:
                    value[target] = model.pop(key)
            if model:
                raise ValueError(f"model: unknown keys {sorted(model)} (id, toolCalls, api)")
        for key in ("toolCalls", "api"):
            dotted = f"model.{key}"
            if dotted in value:
                value[key] = value.pop(dotted)
        return value

    model: str = Field(
        default=DEFAULT_MODEL, min_length=1, json_schema_extra=meta(env="AGENTLS_MODEL")
    )
    """Model id sent to the Messages API."""
    tool_calls: ToolCallsMode = Field(
        default="auto", json_schema_extra=meta(env="AGENTLS_TOOL_CALLS")
    )
    """`model.toolCalls`: how tool calls are read from replies. `native`: only the
    endpoint's structured calls; `text`: also calls written as text (a ```` ```json ````
    block `{"name", "arguments"}`, `<tool_call>` tags: what small local models write);
    `auto`: `text` for endpoints that are not Anthropic's, `native` for Anthropic's."""
    api: ModelApi = Field(default="messages", json_schema_extra=meta(env="AGENTLS_MODEL_API"))
    """`model.api`: the wire protocol of the endpoint. `messages`: Anthropic's Messages API
    (`/v1/messages`); `chat-completions`: OpenAI-compatible `/v1/chat/completions`
    (llama.cpp's server, vLLM, Ollama, LM Studio)."""
    tools: ToolsSettings = Field(default_factory=ToolsSettings)
    """The tool profile and the workspace overview (`tools.profile`, `tools.overview`)."""
    loop_guard: int = Field(
        default=4, ge=2, le=100, json_schema_extra=meta(env="AGENTLS_LOOP_GUARD")
    )
    """Identical failing tool calls after which the run fails ("stuck");
    from the second, the result tells the model to change its approach."""
    read_before_edit: bool = Field(
        default=True, json_schema_extra=meta(env="AGENTLS_READ_BEFORE_EDIT")
    )
    """`edit_file` refuses a file not read (or written) in this session, or changed since it
    was read ("read it first", as Claude Code). Off only for scripted replays."""
    max_tokens: int = Field(
        default=16_000, ge=1, le=1_000_000, json_schema_extra=meta(env="AGENTLS_MAX_TOKENS")
    )
    """`max_tokens` of each model request."""
    max_turns: int = Field(
        default=50, ge=1, le=1_000, json_schema_extra=meta(env="AGENTLS_MAX_TURNS")
    )
    """Model turns per run at most."""
    temperature: float | None = Field(
        default=None, ge=0.0, le=1.0, json_schema_extra=meta(env="AGENTLS_TEMPERATURE")
    )
    """Sampling temperature (empty: the endpoint's default)."""
    request_timeout: float = Field(
        default=600.0, gt=0, json_schema_extra=meta(env="AGENTLS_REQUEST_TIMEOUT")
    )
    """Seconds one model request may take."""
    stall_timeout: float = Field(
        default=120.0, ge=0, le=86_400, json_schema_extra=meta(env="AGENTLS_STALL_TIMEOUT")
    )
    """Seconds an attempt may go without content (text, tool input, any stream event but
    pings) before it is dropped and retried (0: no stall detector)."""
    request_deadline: float = Field(
        default=900.0, gt=0, le=86_400, json_schema_extra=meta(env="AGENTLS_REQUEST_DEADLINE")
    )
    """Seconds one model request may take in all, retries and back-off included; then the
    run fails (a hung or endlessly pinging endpoint cannot hold a run for longer)."""
    base_url: str | None = Field(
        default=None,
        min_length=1,
        json_schema_extra=meta(env="ANTHROPIC_BASE_URL", user_only=True),
    )
    """Messages-API endpoint (empty: ANTHROPIC_BASE_URL, else api.anthropic.com). Works with
    Ollama, llama.cpp's server, LiteLLM, vLLM. Not from a project file: a cloned repository
    must not redirect your key."""
    max_retries: int = Field(
        default=4, ge=0, le=100, json_schema_extra=meta(env="AGENTLS_MAX_RETRIES")
    )
    """Retries of a transient API failure (429, 529, 5xx, a dropped stream)."""
    retry_base_delay: float = Field(
        default=1.0, ge=0, json_schema_extra=meta(env="AGENTLS_RETRY_BASE_DELAY")
    )
    """Seconds before the first retry (doubling each time)."""
    retry_max_delay: float = Field(
        default=30.0, ge=0, json_schema_extra=meta(env="AGENTLS_RETRY_MAX_DELAY")
    )
    """Longest wait between retries (also caps an honoured `retry-after`)."""
    max_continuations: int = Field(default=3, ge=0, le=100)
    """Continuations when a reply stops at `max_tokens` in the middle of its text."""
    context_window: int | None = Field(
        default=None, ge=1000, json_schema_extra=meta(env="AGENTLS_CONTEXT_WINDOW")
    )
    """Tokens the model reads at most (empty: the model's known window, else 200000)."""
    compact_threshold: float = Field(
        default=0.8, ge=0.1, le=1.0, json_schema_extra=meta(env="AGENTLS_COMPACT_THRESHOLD")
    )
    """Compact when the next request would use more than this share of the window."""
    auto_compact: bool = Field(default=True, json_schema_extra=meta(env="AGENTLS_AUTO_COMPACT"))
    """Summarise older turns automatically when the context fills up."""
    compact_keep_turns: int = Field(
        default=4, ge=0, json_schema_extra=meta(env="AGENTLS_COMPACT_KEEP_TURNS")
    )
    """Assistant turns a compaction keeps verbatim (with their tool results)."""
    compact_summary_tokens: int = Field(default=4096, ge=256, le=100_000)
    """`max_tokens` of the summary request of a compaction."""
    stub_after_turns: int = Field(
        default=6, ge=0, json_schema_extra=meta(env="AGENTLS_STUB_AFTER_TURNS")
    )
    """Old tool results longer than `stubMinChars` become a re-read stub after this many
    turns (0: never)."""
    stub_min_chars: int = Field(
        default=2000, ge=0, json_schema_extra=meta(env="AGENTLS_STUB_MIN_CHARS")
    )
    """Tool results shorter than this are never stubbed."""
    prices: dict[str, PriceEntry] = Field(
        default_factory=dict, json_schema_extra=meta(env="AGENTLS_PRICES")
    )
    """Price overrides by model-id prefix, on top of the built-in table (USD per million
    tokens), e.g. `{"qwen": [0.5, 1]}`. In the environment: the same as JSON text. The
    built-in table is Anthropic's list price and applies only to Anthropic's endpoint;
    elsewhere cost is "n/a" unless a price is given here."""

    api_key_helper: str | None = Field(
        default=None, min_length=1, json_schema_extra=meta(user_only=True, restricted=True)
    )
    """A shell command whose output is the API key (Claude Code's `apiKeyHelper`), run when
    no key is in the environment; the key is sent as `x-api-key` and as a bearer token, and
    fetched again after `API_KEY_HELPER_TTL` (5 minutes) or a 401. Not from a project."""
    auth_header: Literal["auto", "bearer", "x-api-key", "both"] = Field(
        default="auto", json_schema_extra=meta(env="AGENTLS_AUTH_HEADER", user_only=True)
    )
    """How the credential (`ANTHROPIC_API_KEY`, else `ANTHROPIC_AUTH_TOKEN`, else the
    `apiKeyHelper`'s key) is sent: `bearer` (`Authorization: Bearer`, what the SDK sends),
    `x-api-key` (only an `x-api-key` header, for endpoints that accept nothing else),
    `both`, or `auto` (`bearer`; `both` for an `apiKeyHelper` key, as Claude Code)."""
    headers: dict[str, str] = Field(
        default_factory=dict, json_schema_extra=meta(env="AGENTLS_HEADERS", user_only=True)
    )
    """Extra HTTP headers for every model request (a gateway's tenant or routing headers).
    In the environment: a JSON object, or `Name: Value` lines (as Claude Code's
    `ANTHROPIC_CUSTOM_HEADERS`). Their values are treated as credentials (redacted)."""
    thinking_budget: int | None = Field(
        default=None, ge=0, le=200_000, json_schema_extra=meta(env="AGENTLS_THINKING_BUDGET")
    )
    """Extended thinking: tokens the model may think before answering (at least 1024;
    empty or 0: off). `maxTokens` is raised above the budget when it is not; temperature is
    not sent while thinking. Thinking blocks stay in the history unchanged."""

    @field_validator("headers", mode="before")
    @classmethod
    def _headers_from_text(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        text = value.strip()
        if text.startswith("{"):
            try:
                return json.loads(text)
            except ValueError as exc:
                raise ValueError(f"not valid JSON ({exc})") from None
        found: dict[str, str] = {}
        for line in text.splitlines():
            if not line.strip():
                continue
            name, colon, header = line.partition(":")
            if not colon or not name.strip():
                raise ValueError(f"{line!r} is not a `Name: Value` line")
            found[name.strip()] = header.strip()
        return found

    @field_validator("headers")
    @classmethod
    def _header_names(cls, value: dict[str, str]) -> dict[str, str]:
        for name in value:
            if not re.fullmatch(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+", name):
                raise ValueError(f"{name!r} is not a valid HTTP header name")
        return value

    @field_validator("thinking_budget")
    @classmethod
    def _thinking_minimum(cls, value: int | None) -> int | None:
        if value and value < 1024:
            raise ValueError("the thinking budget must be at least 1024 tokens (or 0: off)")
        return value or None

    @field_validator("prices", mode="before")
    @classmethod
    def _prices_from_json(cls, value: Any) -> Any:
        if isinstance(value, str):
            try:
                return json.loads(value)
            except ValueError as exc:
                raise ValueError(f"not valid JSON ({exc})") from None
        return value
