"""A session's staged edits as data: saved with the session, restored, checked for staleness.

`snapshot` turns a `ChangeSet` into `StagedChange`s (net change per file, with the text the
agent based it on); `restore` stages them again in order. Buffer versions are not kept:
they belong to the editor session that produced them. What protects the user's work
after a restart is the base text: delivery compares it with the file as it is now and
rebases the agent's change or reports a conflict (see `agentls.lsp.edits`), and
`stale_changes` says up front which files changed since the edit was staged.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from agentls.agent.protocol.results import HunkPayload
from agentls.workspace import ChangeSet
from agentls.workspace.changes import Change
from agentls.workspace.hunks import Hunk, file_hunks


class StagedChange(BaseModel):
    """One file's net staged change, as the state file stores it."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    kind: Literal["create", "modify", "delete", "rename"]
    path: str
    old_path: str | None = None
    original_text: str | None = None
    """The text the agent read before changing the file (None: created, or not text)."""
    new_text: str | None = None
    """The staged content (None: deleted, or renamed with its content unchanged)."""


def snapshot(changes: ChangeSet) -> list[StagedChange]:
    return snapshot_entries(changes.entries())


def snapshot_entries(entries: Iterable[Change]) -> list[StagedChange]:
    return [_entry(change) for change in entries]


def _entry(change: Change) -> StagedChange:
    return StagedChange(
        kind=change.kind,
        path=str(change.path),
        old_path=None if change.old_path is None else str(change.old_path),
        original_text=change.original_text,
        new_text=change.new_text,
    )


def change_of(entry: StagedChange) -> Change:
    """One saved change as it was (not merged with others, as `restore` does)."""
    return Change(
        kind=entry.kind,
        path=Path(entry.path),
        old_path=None if entry.old_path is None else Path(entry.old_path),
        original_text=entry.original_text,
        new_text=entry.new_text,
    )


def restore(entries: Iterable[StagedChange], into: ChangeSet | None = None) -> ChangeSet:
    """Stage `entries` again, in their order (the order they were first staged in)."""
    changes = into if into is not None else ChangeSet()
    for entry in entries:
        path = Path(entry.path)
        if entry.kind == "create" and entry.new_text is not None:
            changes.stage_write(path, entry.new_text, None, existed=False)
        elif entry.kind == "modify" and entry.new_text is not None:
            changes.stage_write(path, entry.new_text, entry.original_text, existed=True)
        elif entry.kind == "delete":
            changes.stage_delete(path, entry.original_text)
        elif entry.kind == "rename" and entry.old_path is not None:
            changes.stage_rename(Path(entry.old_path), path, entry.original_text)
            if entry.new_text is not None:
                changes.stage_write(path, entry.new_text, entry.original_text, existed=True)
    return changes


@dataclass(frozen=True)
class StaleChange:
    """A staged change whose file changed since the agent read it."""

    path: Path
    reason: str


def stale_changes(
    changes: ChangeSet, current_text: Callable[[Path], str | None]
) -> list[StaleChange]:
    """Changes whose base no longer matches the file (`current_text`: None = no such file).

    Stale changes are not necessarily lost: delivery rebases an edit onto the user's text
    when their lines do not touch. This is what a caller tells the user before trying.
    """
    stale: list[StaleChange] = []
    for change in changes.entries():
        source = change.old_path if change.kind == "rename" else change.path
        assert source is not None
        now = current_text(source)
        if change.kind == "create":
            if now is not None:
                stale.append(StaleChange(change.path, "the file exists now"))
        elif now is None:
            stale.append(StaleChange(source, "the file no longer exists"))
        elif change.original_text is not None and now != change.original_text:
            stale.append(StaleChange(source, "the file changed since the edit was staged"))
    return stale


def hunk_payloads(changes: ChangeSet) -> list[HunkPayload]:
    """The staged diff hunk by hunk, with the ids `agentls.accept`/`reject` take."""
    return [_hunk(h) for f in file_hunks(changes.entries()) for h in f.hunks]


def _hunk(hunk: Hunk) -> HunkPayload:
    return {
        "id": hunk.id,
        "path": str(hunk.path),
        "index": hunk.index,
        "kind": hunk.kind,
        "where": hunk.where(),
        "old_start": hunk.old_start,
        "old_lines": len(hunk.old_lines),
        "new_start": hunk.new_start,
        "new_lines": len(hunk.new_lines),
        "diff": hunk.diff(),
    }


def review_note(
    action: Literal["accepted", "rejected"],
    hunks: Iterable[Hunk],
    reason: str | None,
    relative: Callable[[Path], str],
) -> str:
    """What the model is told with its next request about the user's review of its edits:
    "the user rejected hunk 2 of b.py (lines 3-4): <reason>"."""
    parts = [f"hunk {h.index} of {relative(h.path)} ({h.where()})" for h in hunks]
    said = f": {reason.strip()}" if reason and reason.strip() else " (no reason given)"
    return (
        f"<system-reminder>The user {action} {', '.join(parts)}{said}. "
        + (
            "Rejected hunks are no longer staged; the files do not contain them."
            if action == "rejected"
            else "Accepted hunks are written to the files."
        )
        + "</system-reminder>"
    )


def file_note(
    action: Literal["accepted", "rejected"],
    paths: Iterable[Path],
    reason: str,
    relative: Callable[[Path], str],
) -> str:
    """The same note for whole files accepted or rejected with a reason."""
    listed = ", ".join(relative(p) for p in paths) or "the staged changes"
    said = reason.strip()
    return f"<system-reminder>The user {action} the change to {listed}: {said}</system-reminder>"


def relative_to(roots: Iterable[Path]) -> Callable[[Path], str]:
    """A path as the user knows it: relative to the workspace root that holds it."""
    folders = list(roots)

    def relative(path: Path) -> str:
        for root in folders:
            if path.is_relative_to(root):
                return path.relative_to(root).as_posix()
        return str(path)

    return relative
