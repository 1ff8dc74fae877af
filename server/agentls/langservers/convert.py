"""lsprotocol values ↔ the core's code-intelligence types, positions in any encoding.

Language servers and editors count columns in UTF-16 units (the LSP default), UTF-8 bytes
or code points; the core counts code points. Converting needs the line's text, taken from
what the agent sees (the overlay) or, for other files, from disk — read once per query.
Used by the language-server client and by the editor bridge alike.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import to_fs_path

from agentls.codeintel.model import (
    Diagnostic,
    FileEdit,
    Location,
    Pos,
    RenameResult,
    Severity,
    Span,
    TextChange,
)
from agentls.workspace.textio import split_lines

_SEVERITIES: dict[int, Severity] = {1: "error", 2: "warning", 3: "information", 4: "hint"}


def path_of(uri: str) -> Path | None:
    """A local, symlink-free path for a `file:` URI (None for other schemes)."""
    if not uri.startswith("file:"):
        return None
    text = to_fs_path(uri)
    return Path(os.path.realpath(text)) if text else None


class Lines:
    """Line texts per file (overlay first, then disk), cached for one query."""

    def __init__(self, texts: Mapping[Path, str]) -> None:
        self._texts = texts
        self._cache: dict[Path, list[str]] = {}

    def of(self, path: Path) -> list[str]:
        found = self._cache.get(path)
        if found is None:
            text = self._texts.get(path)
            if text is None:
                try:
                    with open(path, encoding="utf-8", errors="replace", newline="") as handle:
                        text = handle.read()
                except OSError:
                    text = ""
            found = self._cache[path] = split_lines(text)
        return found

    def line(self, path: Path, index: int) -> str:
        lines = self.of(path)
        return lines[index] if 0 <= index < len(lines) else ""


class Encoding:
    """Column conversion for one negotiated position encoding."""

    def __init__(self, name: str) -> None:
        self.name = name.lower()

    def to_units(self, line: str, column: int) -> int:
        """Code points → the encoding's units."""
        if self.name == "utf-32" or line.isascii():
            return column
        head = line[:column]
        if self.name == "utf-8":
            return len(head.encode("utf-8"))
        return len(head.encode("utf-16-le")) // 2

    def from_units(self, line: str, units: int) -> int:
        """The encoding's units → code points (clamped to the line's end)."""
        if not line:
            return units  # the text is unknown (unreadable file): keep the server's column
        if self.name == "utf-32" or line.isascii():
            return min(units, len(line))
        if self.name == "utf-8":
            return len(line.encode("utf-8")[:units].decode("utf-8", "ignore"))
        count = 0
        for index, char in enumerate(line):
            if count >= units:
                return index
            count += 2 if ord(char) > 0xFFFF else 1
        return len(line)


class Converter:
    """Positions and results of one query, in one encoding."""

    def __init__(self, encoding: Encoding, lines: Lines) -> None:
        self.encoding = encoding
        self.lines = lines

    def position(self, path: Path, pos: Pos) -> types.Position:
        line = self.lines.line(path, pos.line)
        return types.Position(line=pos.line, character=self.encoding.to_units(line, pos.character))

    def pos(self, path: Path, position: types.Position) -> Pos:
        line = self.lines.line(path, position.line)
        return Pos(position.line, self.encoding.from_units(line, position.character))

    def span(self, path: Path, rng: types.Range) -> Span:
        return Span(self.pos(path, rng.start), self.pos(path, rng.end))

    # -- results --------------------------------------------------------------------------

    def locations(self, result: Any) -> list[Location]:
        """A definition or references result (Location, Location[], LocationLink[])."""
        if result is None:
            return []
        items = result if isinstance(result, list | tuple) else [result]
        found: list[Location] = []
        for item in items:
            if isinstance(item, types.LocationLink):
                uri, rng = item.target_uri, item.target_selection_range
            elif isinstance(item, types.Location):
                uri, rng = item.uri, item.range
            else:
                continue
            path = path_of(uri)
            if path is not None:
                found.append(Location(path, self.span(path, rng)))
        return found

    def hover_text(self, result: types.Hover | None) -> str:
        if result is None:
            return ""
        return _markup(result.contents)

    def diagnostics(self, path: Path, items: Iterable[types.Diagnostic]) -> list[Diagnostic]:
        found = []
        for item in items:
            code = "" if item.code is None else str(item.code)
            found.append(
                Diagnostic(
                    path,
                    self.span(path, item.range),
                    _SEVERITIES.get(int(item.severity or 1), "error"),
                    item.message,
                    code,
                    item.source or "",
                )
            )
        return found

    def rename(self, edit: types.WorkspaceEdit | None) -> RenameResult:
        """A `WorkspaceEdit` as per-file text changes; resource operations are reported."""
        if edit is None:
            return RenameResult(())
        per_file: dict[Path, list[TextChange]] = {}
        skipped: list[str] = []
        for uri, edits in (edit.changes or {}).items():
            self._collect(uri, edits, per_file, skipped)
        for change in edit.document_changes or []:
            if isinstance(change, types.TextDocumentEdit):
                self._collect(change.text_document.uri, change.edits, per_file, skipped)
            elif isinstance(change, types.RenameFile):
                skipped.append(f"renaming {change.old_uri} to {change.new_uri}")
            elif isinstance(change, types.CreateFile):
                skipped.append(f"creating {change.uri}")
            elif isinstance(change, types.DeleteFile):
                skipped.append(f"deleting {change.uri}")
        files = tuple(FileEdit(path, tuple(changes)) for path, changes in per_file.items())
        return RenameResult(files, tuple(skipped))

    def _collect(
        self,
        uri: str,
        edits: Iterable[Any],
        per_file: dict[Path, list[TextChange]],
        skipped: list[str],
    ) -> None:
        path = path_of(uri)
        if path is None:
            skipped.append(f"edits to {uri} (not a file)")
            return
        target = per_file.setdefault(path, [])
        for text_edit in edits:
            new_text = getattr(text_edit, "new_text", None)
            if new_text is None:  # a snippet edit: take its plain text
                snippet = getattr(text_edit, "snippet", None)
                new_text = getattr(snippet, "value", "")
            target.append(TextChange(self.span(path, text_edit.range), str(new_text)))


def _markup(contents: Any) -> str:
    if isinstance(contents, types.MarkupContent):
        return contents.value
    if isinstance(contents, str):
        return contents
    if isinstance(contents, types.MarkedStringWithLanguage):
        return f"```{contents.language}\n{contents.value}\n```"
    if isinstance(contents, list | tuple):
        return "\n\n".join(_markup(c) for c in contents)
    return str(contents or "")
