"""`SessionState`: what a session's state file holds (a pydantic model; see `store`).

Fields are only ever added (readers of older files get the defaults); `version` changes
only for an incompatible layout. Credentials are never part of it: settings are not
stored, only the model name.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, PlainSerializer, PlainValidator, model_validator

from agentls.agent.persistence.rewind import Checkpoint
from agentls.agent.persistence.staged import StagedChange
from agentls.agent.protocol.messages import History, parse_history

STATE_VERSION = 1
_NULLABLE = {"cost_usd", "cost_note", "last_input_tokens"}


def _dump_history(history: History) -> list[Any]:
    return list(history)


Messages = Annotated[
    History,
    PlainValidator(parse_history),
    PlainSerializer(_dump_history, return_type=list[Any]),
]
"""The history, checked by `parse_history` (the SDK's TypedDicts are not re-validated)."""


class SessionState(BaseModel):
    """A session's persisted state (see `agentls.agent.persistence.store`)."""

    model_config = ConfigDict(extra="ignore")

    version: int = STATE_VERSION
    id: str
    created: float
    updated: float
    workspace: list[str] = Field(default_factory=list)
    model: str = ""
    first_prompt: str = ""
    last_prompt: str = ""
    status: str = "idle"
    runs: int = 0
    turns: int = 0
    usage: dict[str, int] = Field(default_factory=dict)
    cost_usd: float | None = None
    cost_note: str | None = None
    discovered_tools: list[str] = Field(default_factory=list)
    staged_paths: list[str] = Field(default_factory=list)
    staged: list[StagedChange] | None = None
    """The staged changeset itself (None in files written before it was saved)."""
    todos: list[Any] = Field(default_factory=list)
    """The todo list (`todo_write`), as `{content, status, active_form}` entries."""
    checkpoints: list[Checkpoint] = Field(default_factory=list)
    """The end of each turn, for rewind (`agentls.agent.persistence.rewind`)."""
    applied: list[StagedChange] = Field(default_factory=list)
    """Changes delivered so far, in order (what a rewind reverses)."""
    reminders: list[str] = Field(default_factory=list)
    """Notes waiting for the session's next request (e.g. hunks the user rejected, why)."""
    compactions: int = 0
    stub_boundary: int = 0
    token_ratio: float = 1.0
    last_input_tokens: int | None = None
    transcript: str = ""
    messages: Messages

    @model_validator(mode="before")
    @classmethod
    def _nulls_mean_defaults(cls, data: Any) -> Any:
        """A null in an older or hand-edited file means "the default", as it always did."""
        if isinstance(data, dict):
            return {k: v for k, v in data.items() if v is not None or k in _NULLABLE}
        return data
