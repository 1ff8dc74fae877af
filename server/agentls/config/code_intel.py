"""The code-intelligence settings: `languageServers` (servers agentls starts itself) and how
the editor is asked (`editorQueries`, `editorQueryTimeout`); see docs/code-intelligence.md.
A project's servers are commands a cloned repository chooses, so they are used only while
project settings are trusted (`trustProjectSettings`), like the project's hooks."""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator, model_validator

from agentls.config.base import SettingsModel
from agentls.config.problems import entry_error

__all__ = ["LanguageServerConfig"]


class LanguageServerConfig(SettingsModel):
    """One entry of `languageServers`."""

    command: tuple[str, ...] = ()
    """The server's argv, e.g. `["basedpyright-langserver", "--stdio"]`; a relative path with
    a slash is taken from the first workspace root, a bare name from PATH (and, for trusted
    projects, the project's virtualenv and `node_modules/.bin`)."""
    initialization_options: Any = None
    """Sent with the server's `initialize` request."""
    settings: dict[str, object] | None = None
    """Answered to the server's `workspace/configuration` requests (by dotted section) and
    sent once with `workspace/didChangeConfiguration`."""
    extensions: tuple[str, ...] = ()
    """File extensions (".lua") for a language agentls does not know by name."""
    enabled: bool = True
    """False: never start a server for this language (not even a discovered one)."""
    request_timeout: float | None = Field(default=None, gt=0, le=600)
    """Seconds one request to this server may take (default 60: a cold server indexes the
    project first)."""

    @field_validator("extensions")
    @classmethod
    def _dotted(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(e if e.startswith(".") else f".{e}" for e in (v.strip() for v in value) if e)

    @model_validator(mode="after")
    def _command_when_enabled(self) -> LanguageServerConfig:
        if self.enabled and (not self.command or not self.command[0].strip()):
            raise entry_error("`command` must name the server executable (or set enabled = false)")
        return self
