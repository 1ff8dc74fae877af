"""Claude Code's memory files: what goes into the model's context as project instructions.

Read at a session's start (and re-pinned after each compaction), in this order:

- `~/.claude/CLAUDE.md` (the user's own);
- per workspace root: `AGENTS.md`, `CLAUDE.md`, `.claude/CLAUDE.md`, `CLAUDE.local.md`,
  `.agentls/instructions.md`, and `.claude/rules/**/*.md` without `paths:` front matter.

Loaded when the session touches a file below them (`nested_for`): a `CLAUDE.md` (or
`CLAUDE.local.md`) in a subfolder between the root and that file, and the rules whose
`paths:` globs match it.

`@path` lines import other files (relative to the importing file, `~/` for the home
folder), five levels deep, outside code blocks and `inline code`. Stricter than Claude
Code: a project's file imports only files inside the workspace roots (a repository cannot
pull `~/.ssh/id_rsa` into the model's context), the user's own files anything under the
home folder, and secret files (`.env`, keys, …) never.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from agentls.agent.claude.frontmatter import FrontMatterError, split_front_matter

if TYPE_CHECKING:
    from agentls.agent.run.pipeline import ToolCall, ToolCallResult

__all__ = ["MemoryFile", "memory_files", "memory_seen", "nested_for", "with_nested_memory"]

MAX_FILE_CHARS = 40_000
MAX_IMPORT_DEPTH = 5
ROOT_FILES = ("AGENTS.md", "CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md")
AGENTLS_FILE = ".agentls/instructions.md"
NESTED_FILES = ("CLAUDE.md", "CLAUDE.local.md")
_PATH_KEYS = ("path", "file_path", "notebook_path")
_IMPORT = re.compile(r"(?<![\w`])@((?:~/|\.{1,2}/|/)?[\w.-]+(?:/[\w.-]+)*)")
_CODE = re.compile(r"^```.*?^```|`[^`\n]*`", re.MULTILINE | re.DOTALL)


@dataclass(frozen=True)
class MemoryFile:
    path: Path
    text: str
    """The file's text with its imports appended (each under its own heading)."""


def memory_files(roots: Sequence[Path], home: Path | None = None) -> list[MemoryFile]:
    """The memory files of a session's start, in order (see the module's docstring)."""
    home = home or Path.home()
    found: list[MemoryFile] = []
    user = home / ".claude" / "CLAUDE.md"
    _add(found, user, allowed=[home])
    for root in roots:
        for name in (*ROOT_FILES, AGENTLS_FILE):
            _add(found, root / name, allowed=list(roots))
        for rule, globs in _rules(root):
            if not globs:
                _add(found, rule, allowed=list(roots))
    return found


def nested_for(path: Path, roots: Sequence[Path], seen: set[Path]) -> list[MemoryFile]:
    """Memory that a touched `path` brings in and that is not in `seen` yet (added to it):
    `CLAUDE.md` files of the folders between its root and it, and matching rules."""
    root = next((r for r in roots if _inside(path, r)), None)
    if root is None:
        return []
    found: list[MemoryFile] = []
    relative = path.relative_to(root)
    folder = root
    for part in relative.parts[:-1]:
        folder = folder / part
        for name in NESTED_FILES:
            _add(found, folder / name, allowed=list(roots), seen=seen)
    for rule, globs in _rules(root):
        if globs and any(_matches(g, relative.as_posix()) for g in globs):
            _add(found, rule, allowed=list(roots), seen=seen)
    return found


def with_nested_memory(
    calls: Sequence[ToolCall],
    results: Sequence[ToolCallResult],
    roots: Sequence[Path],
    seen: set[Path],
) -> list[ToolCallResult]:
    """Results of calls that touched a file, with the memory that file brings in (once per
    session: `seen` is the session's, see `memory_seen`), as Claude Code attaches nested
    `CLAUDE.md` files and path rules."""
    roots = list(roots)
    by_id = {call.id: call for call in calls}
    out = []
    for result in results:
        call = by_id.get(result.tool_use_id)
        extra = _touched(call, roots, seen) if call and not result.is_error else []
        if extra and isinstance(result.content, str):
            notes = "\n".join(f"\n## {f.path}\n{f.text}" for f in extra)
            reminder = f"<system-reminder>\nInstructions for files here:{notes}\n</system-reminder>"
            result = replace(result, content=f"{result.content}\n\n{reminder}")
        out.append(result)
    return out


def memory_seen(roots: Sequence[Path]) -> set[Path]:
    """The memory files a session starts with (its instructions already carry them)."""
    return {Path(os.path.realpath(f.path)) for f in memory_files(list(roots))}


def _touched(call: ToolCall, roots: list[Path], seen: set[Path]) -> list[MemoryFile]:
    found: list[MemoryFile] = []
    for key in _PATH_KEYS:
        value = call.input.get(key)
        if isinstance(value, str) and value.strip():
            path = Path(value) if os.path.isabs(value) else roots[0] / value
            found += nested_for(path, roots, seen)
    return found


def _add(
    found: list[MemoryFile], path: Path, *, allowed: list[Path], seen: set[Path] | None = None
) -> None:
    real = Path(os.path.realpath(path))
    if seen is not None and real in seen:
        return
    text = _read(path)
    if text is None:
        return
    if seen is not None:
        seen.add(real)
    body = _body(text)
    parts = [body, *_imports(body, path.parent, allowed, depth=1, visited={real})]
    joined = "\n\n".join(p for p in parts if p.strip()).strip()
    if joined:
        found.append(MemoryFile(path, joined[:MAX_FILE_CHARS]))


def _body(text: str) -> str:
    """A rule file's body (its `paths:` front matter is not for the model)."""
    try:
        return split_front_matter(text)[1]
    except FrontMatterError:
        return text


REFUSED_IMPORT = (
    "not imported: a project's memory file imports only files inside the workspace, and "
    "no file imports a secret file such as .env or a key; import it from your own "
    "~/.claude/CLAUDE.md instead"
)


def _imports(
    text: str, base: Path, allowed: list[Path], *, depth: int, visited: set[Path]
) -> list[str]:
    if depth > MAX_IMPORT_DEPTH:
        return []
    parts: list[str] = []
    for raw in _IMPORT.findall(_CODE.sub(" ", text)):
        target = Path(os.path.expanduser(raw)) if raw.startswith("~/") else base / raw
        real = Path(os.path.realpath(target))
        if real in visited:
            continue
        if not any(_inside(real, a) for a in allowed) or _secret(real):
            if real.is_file():  # said, not silently dropped (stricter than Claude Code)
                parts.append(f"### @{raw}\n({REFUSED_IMPORT})")
            continue
        imported = _read(real)
        if imported is None:
            continue
        visited.add(real)
        parts.append(f"### @{raw}\n{imported.strip()}")
        parts += _imports(imported, real.parent, allowed, depth=depth + 1, visited=visited)
    return parts


def _rules(root: Path) -> Iterable[tuple[Path, list[str]]]:
    folder = root / ".claude" / "rules"
    try:
        files = sorted(p for p in folder.rglob("*.md") if p.is_file())
    except OSError:
        return []
    rules = []
    for file in files:
        text = _read(file)
        if text is None:
            continue
        try:
            data = split_front_matter(text)[0]
        except FrontMatterError:
            data = {}
        globs = data.get("paths") or data.get("globs") or []
        if isinstance(globs, str):
            globs = [g.strip() for g in globs.split(",")]
        listed = globs if isinstance(globs, list) else []  # a mapping or a number: no globs
        rules.append((file, [str(g) for g in listed if str(g).strip()]))
    return rules


def _matches(glob: str, relative: str) -> bool:
    from agentls.workspace.globs import GlobError, glob_re2

    try:
        return glob_re2(glob).fullmatch(relative) is not None
    except GlobError:
        return False


def _read(path: Path) -> str | None:
    try:
        if not path.is_file():
            return None
        return path.read_text(encoding="utf-8", errors="replace")[: MAX_FILE_CHARS * 2]
    except OSError:
        return None


def _inside(path: Path, folder: Path) -> bool:
    return Path(os.path.realpath(path)).is_relative_to(os.path.realpath(folder))


def _secret(path: Path) -> bool:
    from agentls.workspace.secrets import SecretMatcher

    return SecretMatcher().is_secret(path)
