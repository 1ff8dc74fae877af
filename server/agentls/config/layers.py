"""Settings layers and how they combine.

Precedence, lowest first; a later layer overrides the fields it sets, object by object
(a project's `toolSearch.maxTools` and the editor's `toolSearch.mode` both apply):

1. the defaults of the model (`null` or empty text in a source means "not set");
2. the environment (`ANTHROPIC_BASE_URL`, `AGENTLS_*`);
3. the project file (`.agentls.toml`, else `[tool.agentls]` of `pyproject.toml`);
4. the editor (`initializationOptions`, then `workspace/didChangeConfiguration` or the
   pulled `workspace/configuration`), which is user-level.

A project layer may not set the fields marked `userOnly` (the endpoint, MCP servers,
`allowBypassPermissions`, `trustProjectSettings`, `readClaudeSettings`, `secrets.patterns`,
`secrets.exceptions`, and the credential settings `apiKeyHelper`, `authHeader` and
`headers`): they are dropped and reported. The safety settings are not
simply overridden: `agentls.agent.safety.load_safety` combines each layer's rules,
hooks and secret patterns (see there).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel

from agentls.config.base import field_meta
from agentls.config.model import AgentlsSettings
from agentls.config.problems import (
    Path,
    Problem,
    field_name,
    model_class,
    validate_leniently,
)

Level = Literal["environment", "project", "user"]
Slot = Literal["environment", "project", "editor"]
SLOTS: tuple[Slot, ...] = ("environment", "project", "editor")
USER_ONLY_REASON = "only in user or editor settings, not in a project file"


@dataclass(frozen=True)
class Layer:
    """The valid part of one source: what it sets, and what was wrong with it."""

    source: str
    level: Level
    values: dict[str, object] = field(default_factory=dict)
    """The fields it sets, camelCase, already validated."""
    problems: list[Problem] = field(default_factory=list)

    @property
    def settings(self) -> AgentlsSettings:
        """This layer alone over the defaults."""
        return AgentlsSettings.model_validate(self.values)

    def sets(self, alias: str) -> bool:
        return alias in self.values

    def section(self, alias: str) -> Mapping[str, object]:
        """The settings object this layer sets under `alias` (empty when it sets none)."""
        value = self.values.get(alias)
        return value if isinstance(value, Mapping) else {}

    def entries(self, alias: str) -> list[object]:
        """The list this layer sets under `alias` (empty when it sets none)."""
        value = self.values.get(alias)
        return value if isinstance(value, list) else []


def load_layer(raw: object, source: str, level: Level) -> Layer:
    """Validate one source (each invalid part dropped and reported)."""
    problems: list[Problem] = []
    if isinstance(raw, Mapping):
        raw = _without_unset(AgentlsSettings, raw)
    if level == "project" and isinstance(raw, Mapping):
        raw = _without_user_only(AgentlsSettings, dict(raw), source, (), problems)
    checked = validate_leniently(AgentlsSettings, raw, source)
    return Layer(source, level, checked.values, problems + checked.problems)


def _without_unset(model: type[BaseModel], data: Mapping[str, object]) -> dict[str, object]:
    """`null` or empty text means "not set" (editors write settings that way), in
    settings objects; the values of maps (an MCP server's `env`) are left alone."""
    kept: dict[str, object] = {}
    for key, value in data.items():
        name = field_name(model, key)
        if name is not None and (value is None or value == ""):
            continue
        inner = model_class(model.model_fields[name].annotation) if name else None
        if inner is not None and isinstance(value, Mapping):
            value = _without_unset(inner, value)
        kept[key] = value
    return kept


def _without_user_only(
    model: type[BaseModel],
    data: dict[str, object],
    source: str,
    path: Path,
    problems: list[Problem],
) -> dict[str, object]:
    """`data` without the fields a project may not set (reported), at every depth."""
    kept: dict[str, object] = {}
    for key, value in data.items():
        name = field_name(model, key)
        if name is None:
            kept[key] = value  # unknown keys are reported by validation
            continue
        if field_meta(model, name).get("userOnly"):
            problems.append(Problem(source, (*path, key), value, USER_ONLY_REASON, kind="not_here"))
            continue
        inner = model_class(model.model_fields[name].annotation)
        if inner is not None and isinstance(value, Mapping):
            value = _without_user_only(inner, dict(value), source, (*path, key), problems)
        kept[key] = value
    return kept


def merge_values(lower: Mapping[str, object], upper: Mapping[str, object]) -> dict[str, object]:
    """`upper` over `lower`, recursing into objects; lists and scalars are replaced."""
    merged = dict(lower)
    for key, value in upper.items():
        below = merged.get(key)
        if isinstance(value, Mapping) and isinstance(below, Mapping):
            merged[key] = merge_values(below, value)
        else:
            merged[key] = value
    return merged


class SettingsStack:
    """The layered settings of one host; `current` is always valid.

    Each slot holds one layer (the editor's is replaced by every configuration change);
    `set` returns the new layer's problems, each saying what applies now instead.
    """

    def __init__(self) -> None:
        self.layers: dict[Slot, Layer] = {}
        self.current = AgentlsSettings()

    def set(self, slot: Slot, layer: Layer) -> list[str]:
        self.layers[slot] = layer
        values: dict[str, object] = {}
        for name in SLOTS:
            if name in self.layers:
                values = merge_values(values, self.layers[name].values)
        checked = validate_leniently(AgentlsSettings, values, "settings")
        self.current = checked.model
        return [str(p.resolved(self.current)) for p in (*layer.problems, *checked.problems)]

    def layer(self, slot: Slot) -> Layer:
        return self.layers.get(slot) or Layer(slot, "user" if slot == "editor" else slot)
