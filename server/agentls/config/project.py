"""The project file: `.agentls.toml` in the first workspace root, else the `[tool.agentls]`
table of its `pyproject.toml` (the same keys as the editor's `agentls` section)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from agentls.config.layers import Layer, load_layer
from agentls.config.problems import Problem

SECTION = "agentls"
PROJECT_FILE = ".agentls.toml"
MAX_PROJECT_FILE_BYTES = 1024 * 1024


def load_project_layer(root: Path | None) -> Layer:
    """The project layer of `root` (empty when it has no project file)."""
    if root is None:
        return Layer("project", "project")
    dedicated = root / PROJECT_FILE
    if dedicated.is_file():
        return _from_toml(dedicated, ())
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        return _from_toml(pyproject, ("tool", SECTION))
    return Layer("project", "project")


def _from_toml(path: Path, table: tuple[str, ...]) -> Layer:
    label = path.name if not table else f"{path.name} [{'.'.join(table)}]"
    try:
        if path.stat().st_size > MAX_PROJECT_FILE_BYTES:
            raise ValueError("larger than 1 MiB")
        data: Any = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        problem = Problem(path.name, (), None, f"cannot read it ({exc})", kind="section")
        return Layer(label, "project", problems=[problem])
    for key in table:
        data = data.get(key) if isinstance(data, dict) else None
    if data is None:
        return Layer(label, "project")
    return load_layer(data, label, "project")
