"""The process environment.

Two kinds of variables:

- the settings fields that name one in their metadata (`meta(env="AGENTLS_MAX_TURNS")`,
  `ANTHROPIC_BASE_URL`): the environment is the lowest layer of the settings, validated by
  the same `AgentlsSettings` model as every other source (`environment_layer`);
- variables that are not settings (`Environment`): the credentials, which only ever come
  from the environment, and process knobs such as `AGENTLS_TRANSCRIPT_DIR`.

The variables are read by their exact names, empty values ignored (what pydantic-settings
did here, for 1.8 MB of an idle server's memory: issue 33); each value is then validated on
its own, so one bad variable is reported and the others still apply.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from agentls.config.base import field_meta
from agentls.config.model import AgentlsSettings
from agentls.config.problems import Problem, field_name, validate_leniently
from agentls.credentials import held as held_credentials

ENVIRONMENT = "environment"


class Environment(BaseModel):
    """Variables that are not settings of the `agentls` section."""

    model_config = ConfigDict(frozen=True)

    api_key: SecretStr | None = Field(default=None, alias="ANTHROPIC_API_KEY")
    """The Anthropic API key (sent as `x-api-key`)."""
    auth_token: SecretStr | None = Field(default=None, alias="ANTHROPIC_AUTH_TOKEN")
    """A bearer token instead of the key (gateways, LiteLLM)."""
    transcript_dir: Path | None = Field(default=None, alias="AGENTLS_TRANSCRIPT_DIR")
    """Where transcripts and session state go (default `~/.cache/agentls/transcripts`)."""
    disk_poll_seconds: float | None = Field(
        default=None, ge=0.05, alias="AGENTLS_DISK_POLL_SECONDS"
    )
    """Seconds between looks for changes on disk when the editor cannot watch files
    (default 10)."""
    cli_log_level: str | None = Field(default=None, alias="AGENTLS_CLI_LOG_LEVEL")
    """Log level of the `agentls` command line's own logging (default: silent)."""


def setting_variables() -> dict[str, str]:
    """Settings field alias → the environment variable that sets it."""
    return dict(_setting_variables())


@cache
def _setting_variables() -> tuple[tuple[str, str], ...]:
    found = []
    for name, info in AgentlsSettings.model_fields.items():
        variable = field_meta(AgentlsSettings, name).get("env")
        if variable:
            found.append((info.alias or name, variable))
    return tuple(found)


@cache
def variable_names() -> tuple[str, ...]:
    """Every variable agentls reads for itself."""
    own = tuple(info.alias or name for name, info in Environment.model_fields.items())
    return own + tuple(variable for _, variable in _setting_variables())


def read_variables(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The known variables that are set (not empty), by their exact names: from the
    process, or from `environ` (tests, a host that passes its own)."""
    if environ is None:
        found = {name: os.environ[name] for name in variable_names() if os.environ.get(name)}
        # the credentials `agentls.credentials.isolate` took out of the environment
        values = {**held_credentials(), **found}
    else:
        values = {name: environ[name] for name in variable_names() if name in environ}
    return {name: value for name, value in values.items() if value != ""}


def environment(environ: Mapping[str, str] | None = None) -> tuple[Environment, list[Problem]]:
    """The non-settings variables, each validated on its own."""
    checked = validate_leniently(Environment, read_variables(environ), ENVIRONMENT)
    return checked.model, [_as_variable(p, p.path) for p in checked.problems]


def environment_values(
    environ: Mapping[str, str] | None = None,
) -> tuple[dict[str, object], list[Problem]]:
    """The settings the environment sets (camelCase keys), and a problem per bad variable."""
    variables = read_variables(environ)
    raw = {
        alias: _decoded(alias, variables[var])
        for alias, var in _setting_variables()
        if var in variables
    }
    checked = validate_leniently(AgentlsSettings, raw, ENVIRONMENT)
    by_alias = dict(_setting_variables())
    problems = [_as_variable(p, (by_alias.get(str(p.path[0]), ""),)) for p in checked.problems]
    return checked.values, problems


def _decoded(alias: str, text: str) -> Any:
    """JSON text for a structured field (`AGENTLS_PRICES`), as pydantic-settings decodes
    complex fields; text that is not JSON is left for validation to report."""
    name = field_name(AgentlsSettings, alias)
    annotation = AgentlsSettings.model_fields[name].annotation if name else None
    if getattr(annotation, "__origin__", None) not in (dict, list):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def _as_variable(problem: Problem, variable: tuple[Any, ...]) -> Problem:
    return replace(problem, variable=str(variable[0]) if variable else ENVIRONMENT)
