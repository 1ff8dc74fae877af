"""A ratchet on `dict[str, Any]` in `server/` (issue 26: "Typed messages, not dict[str, Any]").

The target is at most 60 lines (246 when the issue was filed), and none for settings entries.
Each shape that is fixed gets a TypedDict or a pydantic model; open JSON gets
`dict[str, object]` (`JsonObject`), narrowed with `isinstance` before use. This test fails
when the count grows past what has been reached; lower `LIMIT` when you remove more.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path
from typing import get_args

from pydantic import BaseModel

from tests.ast_support import parse_module

SERVER = Path(__file__).resolve().parent.parent / "server"
PATTERN = re.compile(r"\b[Dd]ict\[\s*str\s*,\s*(?:typing\.)?Any\s*\]")
"""`dict[str, Any]`, spelled any way (`Dict[str, Any]`, `dict[str,typing.Any]`)."""
LIMIT = 8
"""Lines naming `dict[str, Any]` (or an alias of it) in server/ now (the issue's target: 60)."""

_ALIAS = re.compile(r"^(?:type\s+)?([A-Za-z_]\w*)\s*(?::\s*(?:typing\.)?TypeAlias\s*)?=\s*(.+)$")
"""A module-level alias: `Name = ...`, `Name: TypeAlias = ...` or `type Name = ...`."""


def _module(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _aliases(texts: dict[Path, str], root: Path) -> dict[str, set[str]]:
    """Module → the names it defines as `dict[str, Any]`, directly or through another such
    alias (`JsonDict = dict[str, Any]`, `Rows = list[JsonDict]`), so that renaming the type
    does not hide it from the count."""
    found: dict[str, set[str]] = {_module(path, root): set() for path in texts}
    changed = True
    while changed:
        changed = False
        for path, text in texts.items():
            names = found[_module(path, root)]
            visible = names | _imported(path, root, found)
            for line in text.splitlines():
                match = _ALIAS.match(line)
                if match and match[1] not in names and _names_any(match[2], visible):
                    names.add(match[1])
                    changed = True
    return found


def _imported(path: Path, root: Path, aliases: dict[str, set[str]]) -> set[str]:
    """The aliases of other modules that `path` imports (under the name it uses)."""
    return {used for module, name, used in _imports(path) if name in aliases.get(module, set())}


@functools.cache
def _nodes(path: Path) -> tuple[ast.AST, ...]:
    return tuple(ast.walk(parse_module(path)))


def _imports(path: Path) -> tuple[tuple[str, str, str], ...]:
    """(module, name, name used here) for each `from module import name [as used]`."""
    return tuple(
        (node.module, alias.name, alias.asname or alias.name)
        for node in _nodes(path)
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0
        for alias in node.names
    )


def _import_lines(path: Path) -> set[int]:
    """The lines of import statements (naming an alias there is not using it)."""
    return {
        number
        for node in _nodes(path)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for number in range(node.lineno, (node.end_lineno or node.lineno) + 1)
    }


def _names_any(text: str, aliases: set[str]) -> bool:
    return bool(PATTERN.search(text)) or any(re.search(rf"\b{a}\b", text) for a in aliases)


def _lines(root: Path = SERVER) -> list[str]:
    texts = {path: path.read_text(encoding="utf-8") for path in sorted(root.rglob("*.py"))}
    aliases = _aliases(texts, root)
    found = []
    for path, text in texts.items():
        visible = aliases[_module(path, root)] | _imported(path, root, aliases)
        imports = _import_lines(path)
        for number, line in enumerate(text.splitlines(), 1):
            stripped = line.strip()
            if number in imports or not _names_any(line, visible):
                continue
            found.append(f"{path.relative_to(root)}:{number}: {stripped}")
    return found


def test_dict_str_any_does_not_grow() -> None:
    lines = _lines()
    assert len(lines) <= LIMIT, (
        f"{len(lines)} lines use dict[str, Any] in server/ (at most {LIMIT}): type the new "
        "ones with a TypedDict, a pydantic model or dict[str, object]\n" + "\n".join(lines)
    )


def test_an_alias_of_dict_str_any_counts_where_it_is_used(tmp_path: Path) -> None:
    """Renaming the type is no progress: every line that uses an alias of it counts."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "types.py").write_text(
        "from typing import Any, Dict, TypeAlias\n"
        "JsonDict: TypeAlias = Dict[str, Any]\n"
        "Rows = list[JsonDict]\n"
        "Fine: TypeAlias = dict[str, object]\n",
        encoding="utf-8",
    )
    (package / "use.py").write_text(
        "from pkg.types import (\n    Fine, JsonDict as J, Rows\n)\n"
        "def f(a: J) -> Rows: ...\n"
        "def g(a: Fine) -> None: ...\n"
        "def h(a: dict[str,typing.Any]) -> None: ...\n",
        encoding="utf-8",
    )
    assert [line.split(": ", 1)[0] for line in _lines(tmp_path)] == [
        "pkg/types.py:2",
        "pkg/types.py:3",
        "pkg/use.py:4",
        "pkg/use.py:6",
    ]


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
