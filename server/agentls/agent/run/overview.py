"""The workspace overview sent with a new session's first prompt (`tools.overview`).

Why: a small model does not explore; given no overview it invents paths (`src/app.py`)
and never calls list_files. Like aider's repo map, the first request carries the files
(bounded) and a map of their definitions, ranked so the most referenced come first, cut
to a share of the context window.

Ranking (aider's idea, simplified): a file ranks by how many other files use the names it
defines (counted as whole words in their text), so the code everything depends on comes
first; ties keep path order. Definitions come from the symbol extractor of the index
(tree-sitter), each shown by its first source line.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from agentls.index.model import Symbol
from agentls.index.records import FileRecord
from agentls.index.worker import parse_file
from agentls.workspace import ChangeSet, Workspace

MAX_LISTED = 200
"""Files named in the listing at most."""
MAX_PARSED = 300
"""Files read for the map at most (bigger workspaces: the first ones in path order)."""
MAX_FILE_BYTES = 200_000
SHARE_OF_WINDOW = 8
"""The overview takes at most 1/8 of the context window (and at most `MAX_TOKENS`)."""
MAX_TOKENS = 2_000
CHARS_PER_TOKEN = 4


def overview_budget(context_window: int) -> int:
    """Characters the overview may take for this context window."""
    return min(MAX_TOKENS, context_window // SHARE_OF_WINDOW) * CHARS_PER_TOKEN


def workspace_overview(
    workspace: Workspace,
    changes: ChangeSet,
    budget: int,
    readable: Callable[[Path], bool] = lambda path: True,
) -> str:
    """The overview text ("" for an empty workspace). Only files `readable` says read_file
    may show (no secret files, no files a deny or ask rule covers) are listed and mapped."""
    view = workspace.view(changes)
    files = [p for p in view.file_strs(None) if readable(Path(p))]
    if not files:
        return ""
    names = [workspace.display(Path(p)) for p in files]
    listing = names[:MAX_LISTED]
    more = len(names) - len(listing)
    header = [
        # a system reminder, like the pinned instructions: context the agent adds, which
        # hosts replaying the conversation (ACP's session/load) leave out of the user's words
        "<system-reminder>",
        "<workspace-overview>",
        f"Files in the workspace ({len(names)}):",
        *listing,
        *([f"[{more} more files; use list_files]"] if more else []),
    ]
    text = "\n".join(header)
    room = budget - len(text) - 200
    repo_map = _repo_map(workspace, changes, files[:MAX_PARSED], room) if room > 0 else ""
    if repo_map:
        text += "\n\nDefinitions, most used first (first line of each):\n" + repo_map
    return text + "\n</workspace-overview>\n</system-reminder>"


def _repo_map(workspace: Workspace, changes: ChangeSet, files: list[str], room: int) -> str:
    outlines: dict[str, list[Symbol]] = {}
    texts: dict[str, str] = {}
    for file in files:
        loaded = _load(workspace, changes, Path(file))
        if loaded is None:
            continue
        texts[file] = loaded
        packed = parse_file(file, loaded.encode())
        record = FileRecord(Path(file), 0, len(loaded), packed)
        symbols = [s for s in record.outline() if len(s.name) > 2]
        if symbols:
            outlines[file] = symbols
    ranked = _ranked(outlines, texts)
    lines: list[str] = []
    used = 0
    for file in ranked:
        block = [workspace.display(Path(file)) + ":"]
        block += [f"  {_shown(s)}" for s in _flatten(outlines[file])[:30]]
        size = sum(len(line) + 1 for line in block)
        if used + size > room:
            break
        lines += block
        used += size
    return "\n".join(lines)


def _load(workspace: Workspace, changes: ChangeSet, path: Path) -> str | None:
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return None
        return workspace.load(path, changes).text
    except Exception:  # binary, unreadable, secret: the map simply leaves it out
        return None


def _ranked(outlines: dict[str, list[Symbol]], texts: dict[str, str]) -> list[str]:
    words: dict[str, Counter[str]] = {
        file: Counter(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text)) for file, text in texts.items()
    }
    score: dict[str, int] = {}
    for file, symbols in outlines.items():
        defined = {s.name for s in symbols}
        score[file] = sum(
            1 for other, seen in words.items() if other != file for name in defined if seen[name]
        )
    return sorted(outlines, key=lambda f: (-score[f], f))


def _flatten(symbols: list[Symbol]) -> list[Symbol]:
    flat: list[Symbol] = []
    for symbol in symbols:
        flat.append(symbol)
        flat.extend(c for c in symbol.children if len(c.name) > 2)
    return flat


def _shown(symbol: Symbol) -> str:
    indent = "  " if symbol.container else ""
    text = symbol.line_text if len(symbol.line_text) <= 100 else symbol.line_text[:99] + "…"
    return f"{indent}{text}"
