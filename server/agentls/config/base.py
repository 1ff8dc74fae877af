"""The base class of every settings model, the shared literal types, and field metadata.

Every model of the tree derives from `SettingsModel`: snake_case attributes for the code,
camelCase keys for users (generated, so `max_turns` is written `maxTurns`), unknown keys
rejected (so a typo is reported rather than silently ignored), frozen, and the docstring
under each field becomes its description in the JSON Schema and the editors' settings UI
(read only when the schema is generated: `agentls.config.docstrings`).
"""

from __future__ import annotations

import logging
from typing import Literal, Self, TypedDict, get_args

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel
from pydantic.config import JsonDict

log = logging.getLogger(__name__)

RunMode = Literal["review", "auto", "plan"]
"""How a run's edits reach the user: staged for review, applied as they happen, or none
(read-only tools)."""
RUN_MODES: tuple[RunMode, ...] = get_args(RunMode)

PermissionMode = Literal["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"]
"""Claude Code's permission modes (see `agentls.agent.permissions.policy` for what each allows);
`dontAsk` denies whatever would ask."""
PERMISSION_MODES: tuple[PermissionMode, ...] = get_args(PermissionMode)


class SettingsModel(BaseModel):
    """A part of the settings tree (see the package docstring for how to add one)."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        frozen=True,
    )

    @classmethod
    def from_dict(cls, data: object, source: str = "settings") -> Self:
        """Validate leniently (see `agentls.config.problems`): each invalid part is logged
        and dropped. Hosts that can show problems use `validate_leniently` instead."""
        from agentls.config.problems import validate_leniently

        checked = validate_leniently(cls, data, source)
        for problem in checked.problems:
            log.warning("%s", problem)
        return checked.model


class FieldMeta(TypedDict, total=False):
    """What the layering and the generators need to know about one field.

    It is stored as `json_schema_extra`, so it also documents the field in the JSON Schema
    (keys prefixed `x-agentls-`).
    """

    env: str
    """The environment variable that sets this field (lowest layer above the defaults)."""
    userOnly: bool
    """Only user-level settings may set it (the editor's, Claude Code's user file): a
    project file (`.agentls.toml`, `[tool.agentls]`) may not, because a cloned repository
    must not redirect the user's key, start programs or loosen the safety settings."""
    restricted: bool
    """Setting it can loosen safety (editors that know workspace trust should not take it
    from an untrusted workspace)."""


META_PREFIX = "x-agentls-"


def meta(*, env: str | None = None, user_only: bool = False, restricted: bool = False) -> JsonDict:
    """`json_schema_extra` for `Field(...)`: `Field(..., json_schema_extra=meta(env=...))`."""
    found: JsonDict = {}
    if env:
        found[META_PREFIX + "env"] = env
    if user_only:
        found[META_PREFIX + "userOnly"] = True
    if restricted:
        found[META_PREFIX + "restricted"] = True
    return found


def field_meta(model: type[BaseModel], name: str) -> FieldMeta:
    """The metadata of one field (empty when it has none)."""
    extra = model.model_fields[name].json_schema_extra
    if not isinstance(extra, dict):
        return FieldMeta()
    found = FieldMeta()
    for key, value in extra.items():
        if key.startswith(META_PREFIX):
            found[key.removeprefix(META_PREFIX)] = value  # type: ignore[literal-required]
    return found
