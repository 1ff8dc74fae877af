"""Hunks of a staged changeset: the units a user accepts or rejects one by one.

A modified text file splits into one hunk per run of changed lines (no context lines are
merged in, so two edits a few lines apart stay two decisions); a created, deleted or
renamed file is one hunk. Hunk ids number the session's staged diff from 1, in staging
order, so `agentls.accept {hunks: [2]}` means the second hunk of the list `agentls.status`
showed. The ids are recomputed from the changeset each time: callers resolve them against
the changeset they act on (`select`), and `texts_with` builds the text a file has when
only some of its hunks are applied.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from agentls.workspace.changes import Change, ChangeKind, ChangeSet
from agentls.workspace.merge import lines_with_endings, match_line_endings

__all__ = [
    "FileHunks",
    "Hunk",
    "HunkSelection",
    "applied_part",
    "drop",
    "file_hunks",
    "part",
    "select",
    "text_with",
]


@dataclass(frozen=True)
class Hunk:
    """One run of changed lines (or a whole-file create/delete/rename)."""

    id: int
    """Session-wide number, from 1, in the order `agentls.status` lists them."""
    path: Path
    index: int
    """Number within its file, from 1."""
    kind: ChangeKind
    old_start: int
    """First original line (1-based; for a pure insertion, the line it goes after)."""
    old_lines: tuple[str, ...]
    new_start: int
    new_lines: tuple[str, ...]

    def header(self) -> str:
        return (
            f"@@ -{self.old_start},{len(self.old_lines)} +{self.new_start},{len(self.new_lines)} @@"
        )

    def diff(self) -> str:
        """The hunk as unified-diff text (header, `-` and `+` lines, no context)."""
        lines = [self.header()]
        lines += ["-" + line.rstrip("\r\n") for line in self.old_lines]
        lines += ["+" + line.rstrip("\r\n") for line in self.new_lines]
        return "\n".join(lines)

    def where(self) -> str:
        """`lines 3-4` of the original (or where an insertion goes)."""
        if self.kind != "modify":
            return {"create": "new file", "delete": "file deleted", "rename": "file renamed"}[
                self.kind
            ]
        count = len(self.old_lines)
        if count == 0:
            return f"after line {self.old_start}"
        end = self.old_start + count - 1
        return f"line {self.old_start}" if count == 1 else f"lines {self.old_start}-{end}"


@dataclass(frozen=True)
class FileHunks:
    """A staged change and its hunks; `split` False: the change goes whole (one hunk)."""

    change: Change
    hunks: tuple[Hunk, ...]
    split: bool


def _lines(text: str | None) -> list[str]:
    """Lines as LSP (and delivery's `line_hunks`) count them, so hunk N here is edit N of
    the delivered WorkspaceEdit."""
    return [] if text is None else lines_with_endings(text)


def _sides(change: Change) -> tuple[list[str], list[str]]:
    """Original and new lines; the new text in the original's line endings, as delivery
    writes it (a CRLF file the agent wrote LF lines into is not one hunk per line)."""
    new = change.new_text
    if new is not None:
        new = match_line_endings(change.original_text, new)
    return _lines(change.original_text), _lines(new)


def _opcodes(change: Change) -> list[tuple[str, int, int, int, int]]:
    a, b = _sides(change)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return [op for op in matcher.get_opcodes() if op[0] != "equal"]


def _splits(change: Change) -> bool:
    return (
        change.kind == "modify" and change.original_text is not None and change.new_text is not None
    )


def _file(change: Change, first_id: int) -> FileHunks:
    if not _splits(change):
        hunk = Hunk(
            first_id,
            change.path,
            1,
            change.kind,
            1,
            tuple(_lines(change.original_text)),
            1,
            tuple(_lines(change.new_text)),
        )
        return FileHunks(change, (hunk,), False)
    a, b = _sides(change)
    hunks = []
    for index, (_, i1, i2, j1, j2) in enumerate(_opcodes(change), start=1):
        old_start = i1 + 1 if i2 > i1 else i1
        new_start = j1 + 1 if j2 > j1 else j1
        hunks.append(
            Hunk(
                first_id + index - 1,
                change.path,
                index,
                "modify",
                old_start,
                tuple(a[i1:i2]),
                new_start,
                tuple(b[j1:j2]),
            )
        )
    return FileHunks(change, tuple(hunks), True)


def file_hunks(changes: Sequence[Change]) -> list[FileHunks]:
    """Every staged change with its hunks, numbered across the whole changeset."""
    result: list[FileHunks] = []
    next_id = 1
    for change in changes:
        entry = _file(change, next_id)
        next_id += len(entry.hunks)
        result.append(entry)
    return result


def text_with(change: Change, indices: Iterable[int]) -> str:
    """A modified file's text with only the hunks numbered `indices` (1-based) applied."""
    wanted = set(indices)
    a, b = _sides(change)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    out: list[str] = []
    index = 0
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            out += a[i1:i2]
            continue
        index += 1
        out += b[j1:j2] if index in wanted else a[i1:i2]
    return "".join(out)


@dataclass(frozen=True)
class HunkSelection:
    """Hunks picked by id, per file: whole changes, and changes of which only some go."""

    whole: list[FileHunks]
    partial: list[tuple[FileHunks, list[Hunk]]]

    @property
    def hunks(self) -> list[Hunk]:
        found = [h for f in self.whole for h in f.hunks]
        return sorted(found + [h for _, hs in self.partial for h in hs], key=lambda h: h.id)


def select(changes: Sequence[Change], ids: Iterable[int]) -> HunkSelection:
    """Resolve hunk ids against `changes`; ValueError naming the ids that do not exist."""
    wanted = set(ids)
    files = file_hunks(changes)
    known = {h.id for f in files for h in f.hunks}
    unknown = sorted(wanted - known)
    if unknown:
        listed = ", ".join(str(i) for i in unknown)
        top = max(known, default=0)
        raise ValueError(
            f"no staged hunk {listed} (this session has {top} hunk(s); list them again with "
            "agentls.status, the diff may have changed)"
        )
    whole: list[FileHunks] = []
    partial: list[tuple[FileHunks, list[Hunk]]] = []
    for entry in files:
        picked = [h for h in entry.hunks if h.id in wanted]
        if not picked:
            continue
        if len(picked) == len(entry.hunks):
            whole.append(entry)
        else:
            partial.append((entry, picked))
    return HunkSelection(whole, partial)


def applied_part(change: Change, text: str) -> bool:
    """Whether `text` is the change's original with some, not all, of its hunks applied
    (what an editor leaves when the user unticks hunks in its preview)."""
    if not _splits(change) or text in (change.original_text, change.new_text):
        return False
    assert change.original_text is not None
    mine = {(i1, i2, tuple(b[j1:j2])) for (_, i1, i2, j1, j2), b in _with_new(change)}
    matcher = difflib.SequenceMatcher(
        None, _lines(change.original_text), _lines(text), autojunk=False
    )
    theirs = _lines(text)
    done = [
        (i1, i2, tuple(theirs[j1:j2]))
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    ]
    return bool(done) and all(h in mine for h in done)


def _with_new(change: Change) -> list[tuple[tuple[str, int, int, int, int], list[str]]]:
    _, b = _sides(change)
    return [(op, b) for op in _opcodes(change)]


def drop(changes: ChangeSet, selection: HunkSelection) -> list[Path]:
    """Unstage the selected hunks (whole files discarded, others restaged without them);
    returns the paths touched."""
    touched: list[Path] = []
    if selection.whole:
        touched += changes.discard([p for e in selection.whole for p in _paths(e.change)])
    for entry, picked in selection.partial:
        change = entry.change
        keep = [h.index for h in entry.hunks if h not in picked]
        changes.stage_write(
            change.path,
            text_with(change, keep),
            change.original_text,
            change.base_version,
            existed=True,
        )
        touched.append(change.path)
    return list(dict.fromkeys(touched))


def part(entry: FileHunks, picked: Sequence[Hunk]) -> tuple[ChangeSet, str]:
    """A changeset holding only the picked hunks of one modified file (to deliver them),
    and the text the file has once they are applied (`ChangeSet.rebase` the real one to it
    when delivered)."""
    change = entry.change
    partial = text_with(change, [h.index for h in picked])
    only = ChangeSet()
    only.stage_write(change.path, partial, change.original_text, change.base_version, existed=True)
    return only, partial


def _paths(change: Change) -> list[Path]:
    return [change.path] if change.old_path is None else [change.old_path, change.path]
