"""Rewind: roll a session back to the end of an earlier turn (one user prompt and its run).

At the end of each run the session keeps a `Checkpoint`: how many messages the history
had, the staged changeset, how far the applied-changes log went, and the prompt. Rewinding
to turn N cuts the history back to that length (so the model no longer sees the later
prompts), restores the staged changeset of that moment, and stages the reverse of every
change that was applied after it (accepted, or written in auto mode): the host delivers
those like any staged edit — rebased onto the editor's current text, a file the user
changed on the same lines reported as a conflict and never overwritten.

A compaction summarises the history, so a turn before the last compaction cannot be
rewound to (said so).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

from agentls.agent.persistence.staged import StagedChange, snapshot_entries
from agentls.workspace.changes import Change, ChangeSet

__all__ = ["Checkpoint", "RewindError", "checkpoint", "reverse", "turn_files"]


class RewindError(ValueError):
    """The turn asked for cannot be rewound to (unknown, current, before a compaction)."""


class Checkpoint(BaseModel):
    """The session at the end of one turn."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    turn: int
    prompt: str
    messages: int
    compactions: int
    staged: list[StagedChange]
    applied: int
    """Length of the applied-changes log at that moment."""
    files: list[str]
    """Files this turn changed (staged or applied)."""


def checkpoint(
    turn: int,
    prompt: str,
    messages: int,
    compactions: int,
    changes: ChangeSet,
    previous: Checkpoint | None,
) -> Checkpoint:
    staged = snapshot_entries(changes.entries())
    applied_before = previous.applied if previous is not None else 0
    return Checkpoint(
        turn=turn,
        prompt=prompt,
        messages=messages,
        compactions=compactions,
        staged=staged,
        applied=len(changes.applied),
        files=turn_files(previous, staged, changes.applied[applied_before:]),
    )


def turn_files(
    previous: Checkpoint | None, staged: list[StagedChange], applied: list[Change]
) -> list[str]:
    """Paths whose staged change differs from the previous checkpoint's, or were applied."""
    before = {(c.path, c.new_text, c.kind) for c in (previous.staged if previous else [])}
    found = {c.path for c in staged if (c.path, c.new_text, c.kind) not in before}
    found |= {str(c.path) for c in applied}
    return sorted(found)


def reverse(applied: list[Change], into: ChangeSet) -> list[Path]:
    """Stage the reverse of applied changes (newest first); returns the paths touched.
    A path already staged at the checkpoint is left alone (its staged change wins)."""
    touched: list[Path] = []
    for change in reversed(applied):
        if change.kind == "modify" and change.new_text is not None:
            if into.text(change.path) is not None or change.original_text is None:
                continue
            into.stage_write(change.path, change.original_text, change.new_text, existed=True)
        elif change.kind == "create" and change.new_text is not None:
            if into.text(change.path) is not None:
                continue
            into.stage_delete(change.path, change.new_text)
        elif change.kind == "delete" and change.original_text is not None:
            if into.text(change.path) is not None:
                continue
            into.stage_write(change.path, change.original_text, None, existed=False)
        elif change.kind == "rename" and change.old_path is not None:
            if into.text(change.path) is not None or into.text(change.old_path) is not None:
                continue
            into.stage_rename(change.path, change.old_path, change.new_text)
            if change.new_text is not None and change.original_text is not None:
                into.stage_write(
                    change.old_path, change.original_text, change.new_text, existed=True
                )
        else:
            continue
        touched.append(change.path)
    return touched
