"""The project file: `.agentls.toml` in the first workspace root, else the `[tool.agentls]`
table of its `pyproject.toml` (the same keys as the editor's `agentls` section)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, Final

from agentls.config.files import read_settings_file
from agentls.config.layers import Layer, load_layer
from agentls.config.problems import Problem

SECTION = "agentls"
PROJECT_FILE = ".agentls.toml"
PYPROJECT = "pyproject.toml"
PYPROJECT_TABLE = ("tool", SECTION)
MAX_PROJECT_FILE_BYTES = 1024 * 1024
INVALID: Final = "<not readable as TOML>"
"""What `settings_table` gives for text the loader would reject as a whole."""


def load_project_layer(root: Path | None) -> Layer:
    """The project layer of `root` (empty when it has no project file)."""
    if root is None:
        return Layer("project", "project")
    dedicated = root / PROJECT_FILE
    if dedicated.is_file():
        return _from_toml(dedicated, ())
    pyproject = root / PYPROJECT
    if pyproject.is_file():
        return _from_toml(pyproject, PYPROJECT_TABLE)
    return Layer("project", "project")


def project_file(root: Path) -> tuple[Path, Any] | None:
    """The file the project layer of `root` comes from, with (for `pyproject.toml`) its
    `[tool.agentls]` table as the loader sees it; None when there is none."""
    dedicated = root / PROJECT_FILE
    if dedicated.is_file():
        return dedicated, None
    pyproject = root / PYPROJECT
    if not pyproject.is_file():
        return None
    try:
        text = pyproject.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return pyproject, INVALID
    table = settings_table(text)
    return None if table is None else (pyproject, table)


def settings_table(text: str | None, table: tuple[str, ...] = PYPROJECT_TABLE) -> Any:
    """The `[tool.agentls]` table of a pyproject.toml's text, parsed the way the settings
    loader parses it — whatever the spelling (`[tool."agentls"]`, dotted keys, inline
    tables): None without one, `INVALID` when the loader would reject the whole file."""
    if text is None:
        return None
    if len(text.encode("utf-8", "surrogatepass")) > MAX_PROJECT_FILE_BYTES:
        return INVALID
    try:
        data: Any = tomllib.loads(text)
    except ValueError:
        return INVALID
    for key in table:
        data = data.get(key) if isinstance(data, dict) else None
    return data


def _from_toml(path: Path, table: tuple[str, ...]) -> Layer:
    label = path.name if not table else f"{path.name} [{'.'.join(table)}]"
    data: Any
    data, unreadable = read_settings_file(path, max_bytes=MAX_PROJECT_FILE_BYTES)
    if unreadable is not None:
        reason = unreadable.removeprefix(f"{path}: ")
        problem = Problem(path.name, (), None, f"cannot read it ({reason})", kind="section")
        return Layer(label, "project", problems=[problem])
    for key in table:
        data = data.get(key) if isinstance(data, dict) else None
    if data is None:
        return Layer(label, "project")
    return load_layer(data, label, "project")
