"""A ratchet on `dict[str, Any]` in `server/` (issue 26: "Typed messages, not dict[str, Any]").

The target is at most 60 lines (246 when the issue was filed), and none for settings entries.
Each shape that is fixed gets a TypedDict or a pydantic model; open JSON gets
`dict[str, object]` (`JsonObject`), narrowed with `isinstance` before use. This test fails
when the count grows past what has been reached; lower `LIMIT` when you remove more.
"""

from __future__ import annotations

from pathlib import Path
from typing import get_args

from pydantic import BaseModel

SERVER = Path(__file__).resolve().parent.parent / "server"
PATTERN = "dict[str, Any]"
LIMIT = 96
"""Lines naming `dict[str, Any]` in server/ now (the issue's target: 60)."""


def _lines() -> list[str]:
    found = []
    for path in sorted(SERVER.rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if PATTERN in line:
                found.append(f"{path.relative_to(SERVER)}:{number}: {line.strip()}")
    return found


def test_dict_str_any_does_not_grow() -> None:
    lines = _lines()
    assert len(lines) <= LIMIT, (
        f"{len(lines)} lines use {PATTERN} in server/ (at most {LIMIT}): type the new ones "
        "with a TypedDict, a pydantic model or dict[str, object]\n" + "\n".join(lines)
    )


def _untyped_fields(model: type[BaseModel], path: str, seen: set[type[BaseModel]]) -> list[str]:
    """Fields of `model` (and the models inside it) whose type holds `dict[str, Any]`."""
    if model in seen:
        return []
    seen.add(model)
    found = []
    for name, info in model.model_fields.items():
        annotation = info.annotation
        if "dict[str, typing.Any]" in repr(annotation):
            found.append(f"{path}.{name}: {annotation!r}")
        for inner in _models_in(annotation):
            found += _untyped_fields(inner, f"{path}.{name}", seen)
    return found


def _models_in(annotation: object) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in get_args(annotation) for m in _models_in(arg)]


def test_settings_entries_are_not_dict_str_any() -> None:
    """Settings are one pydantic model: no entry of it, at any depth, is `dict[str, Any]`
    (the Claude Code settings agentls reads count too)."""
    from agentls.config.model import AgentlsSettings
    from agentls.config.safety import ClaudeSettingsFile

    untyped = _untyped_fields(AgentlsSettings, "agentls", set())
    untyped += _untyped_fields(ClaudeSettingsFile, "claude", set())
    assert not untyped, "\n".join(untyped)
