"""Model and loop settings, read from the standard Anthropic variables plus our own.

`ANTHROPIC_API_KEY` / `ANTHROPIC_AUTH_TOKEN` / `ANTHROPIC_BASE_URL` are the SDK's own names,
so any endpoint that speaks the Messages API (Ollama, llama.cpp's server, LiteLLM, vLLM)
works unchanged. `AGENTLS_*` variables tune the loop.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

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
    max_continuations: int = 3

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
    except ValueError:
        raise ConfigError(f"{var}={raw!r} is not a valid value") from None


_ENV_VARS: dict[str, tuple[str, Callable[[str], Any]]] = {
    "model": ("AGENTLS_MODEL", str),
    "max_tokens": ("AGENTLS_MAX_TOKENS", int),
    "max_turns": ("AGENTLS_MAX_TURNS", int),
    "temperature": ("AGENTLS_TEMPERATURE", float),
    "max_retries": ("AGENTLS_MAX_RETRIES", int),
    "retry_base_delay": ("AGENTLS_RETRY_BASE_DELAY", float),
    "retry_max_delay": ("AGENTLS_RETRY_MAX_DELAY", float),
    "request_timeout": ("AGENTLS_REQUEST_TIMEOUT", float),
}
