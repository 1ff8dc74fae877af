"""Applying the server's `WorkspaceEdit`s to files, and the unified diff of what changed.

The headless client is the "editor": it answers `workspace/applyEdit`. Every edit is first
computed in memory against the current file contents (all or nothing: a bad range or a
missing file refuses the whole edit), then either written (`--apply`: each file replaced
atomically through a temporary file, so a file is never left half-written) or only kept
in an overlay (a dry run) so the final diff shows what the agent wanted to change.

In a dry run the server keeps the edits staged and computes each later `WorkspaceEdit`
against the disk again, so a later edit of the same file replaces the earlier one in the
overlay rather than stacking on it. Positions are in the negotiated encoding.
"""

from __future__ import annotations

import contextlib
import difflib
import itertools
import os
import re
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from lsprotocol import types

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


class EditError(Exception):
    """The edit cannot be applied as a whole; the message is the `failureReason`."""


def uri_to_path(uri: str) -> Path:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        raise EditError(f"not a file URI: {uri}")
    return Path(unquote(parsed.path))


def _units(char: str, encoding: str) -> int:
    if encoding == "utf-8":
        return len(char.encode("utf-8"))
    if encoding == "utf-16":
        return 2 if ord(char) > 0xFFFF else 1
    return 1


def offset_at(text: str, position: types.Position, encoding: str) -> int:
    """Code-point offset of an LSP position (line breaks: \\n, \\r\\n, \\r)."""
    lines = _LINE.findall(text)
    if position.line >= len(lines):
        return len(text)
    start = sum(len(line) for line in lines[: position.line])
    line = lines[position.line].rstrip("\r\n")
    count = 0
    for index, char in enumerate(line):
        if count >= position.character:
            return start + index
        count += _units(char, encoding)
    return start + len(line)


def apply_text_edits(text: str, edits: Iterable[Any], encoding: str) -> str:
    spans = sorted(
        (
            (offset_at(text, e.range.start, encoding), offset_at(text, e.range.end, encoding), i, e)
            for i, e in enumerate(edits)
        ),
        key=lambda s: (s[0], s[1], s[2]),
    )
    for (_, end, _, _), (start, _, _, _) in itertools.pairwise(spans):
        if end > start:
            raise EditError("overlapping text edits")
    for start, end, _, edit in reversed(spans):
        text = text[:start] + edit.new_text + text[end:]
    return text


def read_text(path: Path) -> str | None:
    """A file's text with its line endings kept; None when it does not exist."""
    try:
        return path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError as exc:
        raise EditError(f"{path} is not UTF-8 text") from exc
    except IsADirectoryError as exc:
        raise EditError(f"{path} is a directory") from exc


@dataclass
class FileChange:
    """One file's before and after (None = absent)."""

    path: Path
    before: str | None
    after: str | None
    renamed_from: Path | None = None


@dataclass
class EditLedger:
    """Everything the server asked to change in this run, and whether it was written."""

    root: Path
    encoding: str = "utf-16"
    apply: bool = False
    originals: dict[Path, str | None] = field(default_factory=dict)
    """Each touched file's content before the first edit (None = did not exist)."""
    overlay: dict[Path, str | None] = field(default_factory=dict)
    """Dry run: the agent's version of each touched file."""
    renames: dict[Path, Path] = field(default_factory=dict)
    """new path → original path."""
    refusing: str | None = None
    """When set (e.g. after Ctrl-C), every further edit is refused with this reason."""
    edits_received: int = 0

    # -- answering applyEdit ----------------------------------------------------------------

    def handle(self, edit: types.WorkspaceEdit) -> types.ApplyWorkspaceEditResult:
        self.edits_received += 1
        if self.refusing is not None:
            return types.ApplyWorkspaceEditResult(applied=False, failure_reason=self.refusing)
        try:
            staged = self.compute(edit)
        except EditError as exc:
            return types.ApplyWorkspaceEditResult(applied=False, failure_reason=str(exc))
        if not self.apply:
            self.overlay.update(staged)
            return types.ApplyWorkspaceEditResult(applied=False, failure_reason="dry run")
        try:
            self.commit(staged)
        except OSError as exc:
            return types.ApplyWorkspaceEditResult(
                applied=False, failure_reason=f"cannot write the files: {exc}"
            )
        return types.ApplyWorkspaceEditResult(applied=True)

    def _current(self, path: Path, staged: dict[Path, str | None]) -> str | None:
        if path in staged:
            return staged[path]
        return read_text(path)

    def _remember(self, path: Path) -> None:
        if path not in self.originals:
            self.originals[path] = read_text(path)

    def compute(self, edit: types.WorkspaceEdit) -> dict[Path, str | None]:
        """The new content of every file the edit touches (None = deleted); nothing written."""
        staged: dict[Path, str | None] = {}
        operations: list[Any] = list(edit.document_changes or [])
        for uri, text_edits in (edit.changes or {}).items():
            operations.append(("changes", uri, list(text_edits)))
        touched: list[Path] = []
        for op in operations:
            touched.extend(self._stage(op, staged))
        for path in touched:
            self._remember(path)
        return staged

    def _stage(self, op: Any, staged: dict[Path, str | None]) -> list[Path]:
        """Apply one operation to `staged`; the paths it touched (none if it was skipped)."""
        if isinstance(op, tuple):
            _, uri, text_edits = op
            return self._stage_text_edits(uri, text_edits, staged)
        if isinstance(op, types.TextDocumentEdit):
            return self._stage_text_edits(op.text_document.uri, list(op.edits), staged)
        if isinstance(op, types.CreateFile):
            return self._stage_create(op, staged)
        if isinstance(op, types.RenameFile):
            return self._stage_rename(op, staged)
        if isinstance(op, types.DeleteFile):
            return self._stage_delete(op, staged)
        raise EditError(f"unsupported operation {type(op).__name__}")

    def _stage_text_edits(
        self, uri: str, text_edits: list[Any], staged: dict[Path, str | None]
    ) -> list[Path]:
        path = self._inside(uri_to_path(uri))
        current = self._current(path, staged)
        if current is None:
            raise EditError(f"{path} does not exist")
        staged[path] = apply_text_edits(current, text_edits, self.encoding)
        return [path]

    def _stage_create(self, op: types.CreateFile, staged: dict[Path, str | None]) -> list[Path]:
        path = self._inside(uri_to_path(op.uri))
        exists = self._current(path, staged) is not None
        create = op.options
        if exists and not (create and (create.overwrite or create.ignore_if_exists)):
            raise EditError(f"{path} already exists")
        if not exists or (create and create.overwrite):
            staged[path] = ""
        return [path]

    def _stage_rename(self, op: types.RenameFile, staged: dict[Path, str | None]) -> list[Path]:
        old = self._inside(uri_to_path(op.old_uri))
        new = self._inside(uri_to_path(op.new_uri))
        content = self._current(old, staged)
        if content is None:
            raise EditError(f"{old} does not exist")
        options = op.options
        if self._current(new, staged) is not None and not (options and options.overwrite):
            if options and options.ignore_if_exists:
                return []
            raise EditError(f"{new} already exists")
        staged[new] = content
        staged[old] = None
        self.renames.setdefault(new, self.renames.pop(old, old))
        return [old, new]

    def _stage_delete(self, op: types.DeleteFile, staged: dict[Path, str | None]) -> list[Path]:
        path = self._inside(uri_to_path(op.uri))
        if self._current(path, staged) is None:
            if op.options and op.options.ignore_if_not_exists:
                return []
            raise EditError(f"{path} does not exist")
        staged[path] = None
        return [path]

    def _inside(self, path: Path) -> Path:
        resolved = Path(os.path.realpath(path))
        root = Path(os.path.realpath(self.root))
        if resolved != root and root not in resolved.parents:
            raise EditError(f"{path} is outside the workspace {root}")
        return resolved

    def commit(self, staged: dict[Path, str | None]) -> None:
        """Write every file of one edit; on a failure, restore the ones already written."""
        done: list[tuple[Path, str | None]] = []
        try:
            for path, content in staged.items():
                previous = read_text(path)
                _write(path, content)
                done.append((path, previous))
        except OSError:
            for path, previous in reversed(done):
                with contextlib.suppress(OSError):
                    _write(path, previous)
            raise

    # -- the result ------------------------------------------------------------------------

    def final(self, path: Path) -> str | None:
        if not self.apply and path in self.overlay:
            return self.overlay[path]
        return read_text(path)

    def file_changes(self) -> list[FileChange]:
        changes = []
        renamed_sources = set(self.renames.values())
        for path in sorted(self.originals):
            before, after = self.originals[path], self.final(path)
            if path in self.renames and self.renames[path] != path:
                source = self.renames[path]
                changes.append(FileChange(path, self.originals.get(source), after, source))
                continue
            if path in renamed_sources and after is None:
                continue  # shown with its new name
            if before != after:
                changes.append(FileChange(path, before, after))
        return changes

    def relative(self, path: Path) -> str:
        root = Path(os.path.realpath(self.root))
        try:
            return path.relative_to(root).as_posix()
        except ValueError:
            return str(path)

    def diff(self) -> str:
        return "".join(unified_diff(c, self.relative) for c in self.file_changes())


def _write(path: Path, content: str | None) -> None:
    if content is None:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".agentls", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(content.encode("utf-8"))
        if path.exists():
            with contextlib.suppress(OSError):
                os.chmod(temp, path.stat().st_mode & 0o7777)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def unified_diff(change: FileChange, name: Any) -> str:
    """A git-style unified diff of one file (applies with `git apply` or `patch -p1`)."""
    new = name(change.path)
    old = name(change.renamed_from) if change.renamed_from is not None else new
    header = f"diff --git a/{old} b/{new}\n"
    if change.renamed_from is not None and change.renamed_from != change.path:
        header += f"rename from {old}\nrename to {new}\n"
    before_lines = (change.before or "").splitlines(keepends=True)
    after_lines = (change.after or "").splitlines(keepends=True)
    if change.before is None:
        header += "new file mode 100644\n"
    elif change.after is None:
        header += "deleted file mode 100644\n"
    if before_lines == after_lines:
        return header if change.renamed_from is not None else ""
    from_name = "/dev/null" if change.before is None else f"a/{old}"
    to_name = "/dev/null" if change.after is None else f"b/{new}"
    lines = list(difflib.unified_diff(before_lines, after_lines, from_name, to_name, n=3))
    out = [header]
    for line in lines:
        if line.endswith("\n"):
            out.append(line)
        else:
            out.append(line + "\n\\ No newline at end of file\n")
    return "".join(out)


def line_counts(change: FileChange) -> tuple[int, int]:
    """(+added, -removed) lines."""
    added = removed = 0
    before = (change.before or "").splitlines()
    after = (change.after or "").splitlines()
    for line in difflib.unified_diff(before, after, n=0, lineterm=""):
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return added, removed


def change_kind(change: FileChange) -> str:
    if change.renamed_from is not None:
        return "renamed"
    if change.before is None:
        return "created"
    if change.after is None:
        return "deleted"
    return "modified"
