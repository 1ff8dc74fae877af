"""Model and loop settings, read from the standard Anthropic variables plus our own.

`ANTHROPIC_API_KEY` / `ANTHROPIC_AUTH_TOKEN` / `ANTHROPIC_BASE_URL` are the SDK's own names,
so any endpoint that speaks the Messages API (Ollama, llama.cpp's server, LiteLLM, vLLM)
works unchanged. `AGENTLS_*` variables tune the loop.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from agentls.agent.pricing import ModelPrice, parse_prices

DEFAULT_MODEL = "claude-sonnet-5-5"


class ConfigError(Exception):
    """A misconfiguration the user must fix; the message says how."""


@dataclass(frozen=True)
class AgentSettings:
    model: str = DEFAULT_MODEL
    max_tokens: int = 16_000
    max_turns: int = 50
    temperature: float | None = None
    api_key: str | None = None
    auth_token: str | None = None
    base_url: str | None = None
    max_retries: int = 4
    retry_base_delay: float = 1.0
    retry_max_delay: float = 30.0
    request_timeout: float = 600.0
    stall_timeout: float = 120.0
    """Seconds an attempt may go without content (text, tool input, any stream event but
    pings) before it is dropped and retried; 0 turns the stall detector off."""
    request_deadline: float = 900.0
    """Seconds one model request may take in all, retries and back-off included; then the
    run fails (a hung or endlessly pinging endpoint cannot hold a run for longer)."""
    max_continuations: int = 3
    context_window: int | None = None
    """Tokens the model reads at most; None = the model's known window (default 200k)."""
    compact_threshold: float = 0.8
    """Compact when the next request would use more than this share of the window."""
    auto_compact: bool = True
    compact_keep_turns: int = 4
    """Assistant turns kept verbatim by a compaction (with their tool results)."""
    compact_summary_tokens: int = 4096
    stub_after_turns: int = 6
    """Old tool results longer than `stub_min_chars` become a re-read stub after this many
    turns (0 = never)."""
    stub_min_chars: int = 2000
    prices: dict[str, ModelPrice] = field(default_factory=dict)
    """Price overrides by model prefix (`AGENTLS_PRICES`), on top of the built-in table."""

    def __repr__(self) -> str:
        shown = {f.name: getattr(self, f.name) for f in fields(self)}
        for secret in ("api_key", "auth_token"):
            if shown[secret]:
                shown[secret] = "***"
        return f"AgentSettings({shown})"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> AgentSettings:
        """Settings from environment variables; invalid values raise `ConfigError`."""
        source = os.environ if env is None else env
        values: dict[str, Any] = {
            "api_key": source.get("ANTHROPIC_API_KEY") or None,
            "auth_token": source.get("ANTHROPIC_AUTH_TOKEN") or None,
            "base_url": source.get("ANTHROPIC_BASE_URL") or None,
        }
        for name, (var, convert) in _ENV_VARS.items():
            raw = source.get(var)
            if raw not in (None, ""):
                values[name] = _convert(var, raw, convert)
        settings = replace(cls(), **values, **overrides)
        settings.validate()
        return settings

    def validate(self) -> None:
        if self.max_tokens < 1:
            raise ConfigError(f"max tokens must be at least 1 (got {self.max_tokens})")
        if self.max_turns < 1:
            raise ConfigError(f"max turns must be at least 1 (got {self.max_turns})")
        if self.temperature is not None and not 0.0 <= self.temperature <= 1.0:
            raise ConfigError(f"temperature must be between 0 and 1 (got {self.temperature})")
        if self.max_retries < 0:
            raise ConfigError(f"max retries must be 0 or more (got {self.max_retries})")
        if self.stall_timeout < 0:
            raise ConfigError(f"stall timeout must be 0 (off) or more (got {self.stall_timeout})")
        if self.request_deadline <= 0:
            raise ConfigError(f"request deadline must be positive (got {self.request_deadline})")
        if self.context_window is not None and self.context_window < 1000:
            raise ConfigError(f"context window must be at least 1000 (got {self.context_window})")
        if not 0.1 <= self.compact_threshold <= 1.0:
            raise ConfigError(
                f"compact threshold must be between 0.1 and 1 (got {self.compact_threshold})"
            )
        if self.compact_keep_turns < 0 or self.stub_after_turns < 0:
            raise ConfigError("compact keep turns and stub-after turns must be 0 or more")

    def require_credentials(self) -> None:
        """Fail with one clear message before the first request, not a traceback after."""
        if self.api_key or self.auth_token or self.base_url:
            return
        raise ConfigError(
            "No API key: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN) in the environment the "
            "server starts in. To use a local Messages-API endpoint (Ollama, llama.cpp, LiteLLM), "
            "set ANTHROPIC_BASE_URL instead."
        )


def _convert(var: str, raw: str, convert: Callable[[str], Any]) -> Any:
    try:
        return convert(raw)
    except ValueError as exc:
        detail = str(exc)
        hint = f" ({detail})" if detail and detail != raw else ""
        raise ConfigError(f"{var}={raw!r} is not a valid value{hint}") from None


def _boolean(raw: str) -> bool:
    lowered = raw.strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise ValueError(raw)


_ENV_VARS: dict[str, tuple[str, Callable[[str], Any]]] = {
    "model": ("AGENTLS_MODEL", str),
    "max_tokens": ("AGENTLS_MAX_TOKENS", int),
    "max_turns": ("AGENTLS_MAX_TURNS", int),
    "temperature": ("AGENTLS_TEMPERATURE", float),
    "max_retries": ("AGENTLS_MAX_RETRIES", int),
    "retry_base_delay": ("AGENTLS_RETRY_BASE_DELAY", float),
    "retry_max_delay": ("AGENTLS_RETRY_MAX_DELAY", float),
    "request_timeout": ("AGENTLS_REQUEST_TIMEOUT", float),
    "stall_timeout": ("AGENTLS_STALL_TIMEOUT", float),
    "request_deadline": ("AGENTLS_REQUEST_DEADLINE", float),
    "context_window": ("AGENTLS_CONTEXT_WINDOW", int),
    "compact_threshold": ("AGENTLS_COMPACT_THRESHOLD", float),
    "auto_compact": ("AGENTLS_AUTO_COMPACT", _boolean),
    "compact_keep_turns": ("AGENTLS_COMPACT_KEEP_TURNS", int),
    "stub_after_turns": ("AGENTLS_STUB_AFTER_TURNS", int),
    "stub_min_chars": ("AGENTLS_STUB_MIN_CHARS", int),
    "prices": ("AGENTLS_PRICES", parse_prices),
}
