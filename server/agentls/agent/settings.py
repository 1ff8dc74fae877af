"""What one session runs with: the model and loop settings plus the credentials.

The fields are `agentls.config.LoopSettings` (one definition: defaults, limits, the
environment variable of each); this class adds the credentials, which only ever come from
the environment (`ANTHROPIC_API_KEY` / `ANTHROPIC_AUTH_TOKEN`, the SDK's own names, so any
endpoint that speaks the Messages API works unchanged) and never appear in its repr.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import Field, SecretStr, ValidationError

from agentls.config import DEFAULT_MODEL, LoopSettings, describe_validation_error

if TYPE_CHECKING:
    from agentls.config.environment import Environment

__all__ = ["DEFAULT_MODEL", "AgentSettings", "ConfigError"]


class ConfigError(Exception):
    """A misconfiguration the user must fix; the message says how."""


class AgentSettings(LoopSettings):
    """Settings of one session (frozen)."""

    api_key: str | None = Field(default=None, repr=False, exclude=True)
    auth_token: str | None = Field(default=None, repr=False, exclude=True)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> AgentSettings:
        """Settings from environment variables (default: the process's), then `overrides`
        by attribute name; any invalid value raises `ConfigError` naming it."""
        from agentls.config.environment import environment, environment_values

        values, problems = environment_values(env)
        if problems:
            raise ConfigError(str(problems[0]))
        credentials, _ = environment(env)
        return cls.resolve(LoopSettings.model_validate(values), credentials, **overrides)

    @classmethod
    def resolve(
        cls, loop: LoopSettings, credentials: Environment | None = None, **overrides: Any
    ) -> AgentSettings:
        """The session's settings: validated loop settings (e.g. a host's merged
        `AgentlsSettings`), the credentials from the environment, then `overrides`."""
        values: dict[str, object] = {n: getattr(loop, n) for n in LoopSettings.model_fields}
        if credentials is not None:
            values["api_key"] = _revealed(credentials.api_key)
            values["auth_token"] = _revealed(credentials.auth_token)
        values.update(overrides)
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            raise ConfigError(f"invalid settings: {describe_validation_error(exc)}") from None

    def require_credentials(self) -> None:
        """Fail with one clear message before the first request, not a traceback after."""
        if self.api_key or self.auth_token or self.base_url or self.api_key_helper:
            return
        raise ConfigError(
            "No API key: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN) in the environment the "
            "server starts in, or an `apiKeyHelper` command in your user settings. To use a "
            "local Messages-API endpoint (Ollama, llama.cpp, LiteLLM), set ANTHROPIC_BASE_URL "
            "instead."
        )


def _revealed(value: SecretStr | None) -> str | None:
    return value.get_secret_value() if value is not None else None
