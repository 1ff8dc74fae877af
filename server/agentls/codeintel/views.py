"""The agent's view of files, as code-intelligence sources need it.

A query's `Document` is the file as the session sees it (staged > editor buffer > disk), and
the `Overlay` lists every file that reads differently from disk, so a language server can
be shown exactly those texts and analyse the rest from disk.
"""

from __future__ import annotations

from pathlib import Path

from agentls.codeintel.languages import language_of
from agentls.codeintel.model import Document, Overlay, TextChange
from agentls.errors import ToolError
from agentls.workspace.changes import DELETED, ChangeSet
from agentls.workspace.core import Workspace


def document_of(workspace: Workspace, path: Path, changes: ChangeSet | None) -> Document:
    """The file as the session sees it; `WorkspaceError` for binary, missing, too large."""
    snapshot = workspace.load(path, changes)
    language = language_of(path)
    return Document(path, snapshot.text, language.id if language is not None else None)


def overlay_of(workspace: Workspace, changes: ChangeSet | None) -> Overlay:
    """Editor buffers and the session's staged edits, as full texts."""
    view = workspace.view(changes)
    texts: dict[Path, str] = {path: buffer.text for path, buffer in view.buffers.items()}
    staged: set[Path] = set()
    deleted: set[Path] = set()
    for path, value in view.staged.items():
        if value is DELETED:
            deleted.add(path)
            texts.pop(path, None)
            continue
        if isinstance(value, str):
            texts[path] = value
        else:  # renamed without edits: the origin's current text
            try:
                texts[path] = workspace.read_text(path, changes)
            except ToolError:
                continue
        staged.add(path)
    return Overlay(texts, frozenset(staged), frozenset(deleted))


def line_starts(text: str) -> list[int]:
    """Offsets where each line begins (lines end at "\\n"; a "\\r" before it stays on the
    line, as LSP counts CRLF files)."""
    starts = [0]
    index = text.find("\n")
    while index != -1:
        starts.append(index + 1)
        index = text.find("\n", index + 1)
    return starts


def offset_of(text: str, starts: list[int], line: int, character: int) -> int:
    """The string offset of a code-point position, clamped to the line and the text."""
    if line >= len(starts):
        return len(text)
    start = starts[line]
    end = starts[line + 1] - 1 if line + 1 < len(starts) else len(text)
    return min(start + character, end)


def apply_changes(text: str, changes: tuple[TextChange, ...]) -> str:
    """`text` with non-overlapping changes applied (positions against `text`)."""
    starts = line_starts(text)
    ordered = sorted(changes, key=lambda c: (c.span.start, c.span.end), reverse=True)
    result = text
    previous_start = len(text) + 1
    for change in ordered:
        begin = offset_of(text, starts, *change.span.start)
        end = offset_of(text, starts, *change.span.end)
        if end > previous_start or begin > end:
            raise ToolError("The language server's rename has overlapping edits; not applied.")
        result = result[:begin] + change.new_text + result[end:]
        previous_start = begin
    return result
