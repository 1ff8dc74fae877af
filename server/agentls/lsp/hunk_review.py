"""Accepting and rejecting staged edits hunk by hunk (`agentls.accept`/`reject {hunks}`).

Hunk ids come from the session's staged diff (`agentls.workspace.hunks`, listed by
`agentls.status`, `agentls.sessions` and `agentls.staged`). A file whose hunks are all
picked goes whole, as a plain accept or reject would. For a file of which only some are
picked:

- accept writes the original text with those hunks applied (one versioned edit, rebased on
  the buffer like any delivery); once the editor applied it, that text becomes the staged
  change's base, so the rest stays staged on top of what is now on disk;
- reject restages the file without those hunks.

Either way the model hears about it with its next request ("the user rejected hunk 2 of
b.py (lines 3-4): <reason>"), so a continued session does not redo what the user refused.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from agentls.agent.persistence.staged import file_note, relative_to, review_note
from agentls.host import EditOutcome
from agentls.lsp.delivery import (
    _apply_now,
    _documents_locked,
    _merged,
    announce,
    apply,
    uri_of,
)
from agentls.workspace.changes import ChangeSet
from agentls.workspace.hunks import FileHunks, Hunk, drop, part, select

if TYPE_CHECKING:
    from agentls.agent.protocol.results import HunksAcceptPayload, RejectPayload
    from agentls.lsp.contract import Connection

CHANGED = (
    "the staged change to this file changed since its hunks were listed; list them again "
    "(agentls.status) and pick again"
)


async def accept_hunks(
    ls: Connection, session_id: str, ids: list[int], reason: str | None
) -> HunksAcceptPayload:
    """Deliver the hunks `ids` of a session's staged diff; the others stay staged."""
    changes = ls.host.changes_of(session_id)
    selection = select(changes.entries(), ids)
    label = f"agentls: accept hunks {', '.join(map(str, sorted(set(ids))))}"
    outcomes: list[EditOutcome] = []
    if selection.whole:
        whole = [entry.change for entry in selection.whole]
        outcomes.append(await apply(ls, changes, whole, label, confirm=False))
    for entry, picked in selection.partial:
        outcomes.append(await _accept_part(ls, changes, entry, picked, label))
    outcome = _merged(outcomes)
    if reason:
        tell(ls, session_id, review_note("accepted", selection.hunks, reason, _relative(ls)))
    result: HunksAcceptPayload = {
        "session": session_id,
        **outcome.to_dict(),
        "hunks": [h.id for h in selection.hunks],
    }
    announce(ls, session_id, "accept", result)
    return result


async def _accept_part(
    ls: Connection,
    changes: ChangeSet,
    entry: FileHunks,
    picked: list[Hunk],
    label: str,
) -> EditOutcome:
    """Apply some hunks of one modified file; on success they become the staged base."""
    path = entry.change.path
    uri = uri_of(ls, path)
    async with _documents_locked(ls, [path]):
        current = next((c for c in changes.entries() if c.path == path), None)
        if current != entry.change:
            return EditOutcome([uri], False, CHANGED, left_out=[(uri, CHANGED)])
        only, partial = part(entry, picked)
        outcome = await _apply_now(ls, only, only.entries(), label, confirm=False)
        if only.is_empty():  # the editor applied it (or already showed it)
            changes.record_applied(only.applied)
            changes.rebase(path, partial)
    return outcome


def reject_hunks(
    ls: Connection, session_id: str, ids: list[int], reason: str | None
) -> RejectPayload:
    """Drop the hunks `ids` from a session's staged diff and tell the model why."""
    changes = ls.host.changes_of(session_id)
    selection = select(changes.entries(), ids)
    touched = drop(changes, selection)
    tell(ls, session_id, review_note("rejected", selection.hunks, reason, _relative(ls)))
    result: RejectPayload = {
        "session": session_id,
        "files": [uri_of(ls, p) for p in touched],
        "hunks": [h.id for h in selection.hunks],
    }
    announce(ls, session_id, "reject", result)
    return result


def note_files(
    ls: Connection,
    session_id: str,
    action: Literal["accepted", "rejected"],
    uris: Iterable[str],
    reason: str | None,
) -> None:
    """A whole-file accept or reject given with a reason: the model hears the reason."""
    if not reason or not reason.strip():
        return
    from agentls.lsp.uris import uri_to_path

    paths = [Path(p) for p in (uri_to_path(u) for u in uris) if p is not None]
    tell(ls, session_id, file_note(action, paths, reason, _relative(ls)))


def tell(ls: Connection, session_id: str, note: str) -> None:
    """Queue `note` for the session's next request (the direct-tool pseudo-session has no
    model to tell)."""
    from agentls.host import DIRECT_SESSION

    if session_id == DIRECT_SESSION:
        return
    ls.host.session(session_id).tell_model(note)


def _relative(ls: Connection) -> Callable[[Path], str]:
    return relative_to(ls.host.workspace.roots)
