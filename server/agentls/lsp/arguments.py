"""The argument object of each command, validated with pydantic.

Imported on the first command, not at start-up: pydantic costs a few hundred milliseconds
to import, and `initialize` should answer as fast as a bare pygls server.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pygls.exceptions import JsonRpcInvalidParams

from agentls.config import RunMode as Mode
from agentls.config import describe_validation_error

M = TypeVar("M", bound=BaseModel)


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PositionArg(_Args):
    line: int = Field(ge=0)
    character: int = Field(ge=0)


class RangeArg(_Args):
    start: PositionArg
    end: PositionArg


class RunArgs(_Args):
    prompt: str = Field(min_length=1)
    uri: str | None = None
    range: RangeArg | None = None
    session: str | None = None
    mode: Mode | None = None
    wait: bool = False


class CancelArgs(_Args):
    session: str | None = None


class EditArgs(_Args):
    session: str
    uris: list[str] | None = None
    hunks: list[int] | None = Field(default=None, min_length=1)
    """Hunk ids of the session's staged diff (`agentls.status`); not with `uris`."""
    reason: str | None = Field(default=None, max_length=4000)
    """Why: it reaches the model with the session's next request."""


class RewindArgs(_Args):
    session: str
    turn: int = Field(ge=1)


class ToolArgs(_Args):
    name: str = Field(min_length=1)
    input: dict[str, object] = Field(default_factory=dict)
    mode: Mode = "review"


class ToolsArgs(_Args):
    session: str | None = None
    mode: Mode = "review"
    deferred: bool = False
    """Also list the deferred tools (marked `defer_loading`, as the API marks them)."""


class StatusArgs(_Args):
    pass


class CompactArgs(_Args):
    session: str


class StagedArgs(_Args):
    session: str
    uris: list[str] | None = None


class ToolResultArgs(_Args):
    session: str
    tool_use_id: str = Field(min_length=1)


class TrustArgs(_Args):
    trusted: bool = True
    """False: do not trust the workspace (its loosening settings stay held back)."""


def parse_args(command: str, model: type[M], args: tuple[Any, ...]) -> M:
    """One argument object (or none, where every field is optional) → the model."""
    if len(args) > 1:
        raise JsonRpcInvalidParams(
            f"{command}: expected one argument object, got {len(args)} arguments"
        )
    raw = args[0] if args else {}
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise JsonRpcInvalidParams(
            f"{command}: the argument must be an object, got {type(raw).__name__}"
        )
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        problems = describe_validation_error(exc, unknown="a known argument")
        raise JsonRpcInvalidParams(f"{command}: {problems}") from None
