"""Sending staged edits to the editor: review, auto, accept and reject.

`workspace/applyEdit` is awaited holding only the locks of the documents it changes: VS
Code keeps a request with `needsConfirmation` edits pending until the user acts in its
refactor preview, and the rest of the server stays responsive meanwhile; only another
delivery to one of those documents waits (it is then built on the version this one
produced, see `apply`). Changes are dropped from the session only
after the client answers `applied: true`; on `applied: false` (or an error) they stay
staged and the result carries the client's reason.

Containment is checked again at delivery: a change whose path (or a rename's source) now
resolves outside the workspace roots — a folder on the way was swapped for a symlink after
the change was staged — is refused and stays staged, with a message that says where the
path leads now. The editor would follow the symlink; agentls never hands it such a URI.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import weakref
from collections.abc import AsyncIterator, Iterable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from agentls.host import EditOutcome
from agentls.lsp.edits import DocState, EditBuilder, EditPlan, match_line_endings, shows_edit
from agentls.lsp.uris import uri_to_path
from agentls.workspace.changes import Change, ChangeSet

if TYPE_CHECKING:
    from agentls.agent.protocol.results import AcceptPayload, RejectPayload
    from agentls.lsp.contract import Connection
    from agentls.runtime.delivery import Handoff

log = logging.getLogger(__name__)

VERIFY_SECONDS = 5.0
"""Longest wait for the didChange that shows an applied edit, for clients that may send it
after answering `workspace/applyEdit`. It only bounds the wait: an edit is confirmed as soon
as the document's version moves on with the new text (clients that declare
`syncBeforeApplyReply` are judged at once, from their answer)."""

NOT_CHANGED = (
    "the editor reported success but did not change the file (unchecked in the preview, or a "
    "stale version skipped); the change stays staged"
)


def uri_of(ls: Connection, path: Path) -> str:
    """The URI the editor knows `path` by (its open document's), else a file URI."""
    return ls.open_uris.get(path) or path.as_uri()


def doc_state(ls: Connection, path: Path) -> DocState:
    """What the editor has for `path` now: its open buffer, else the file on disk."""
    uri = uri_of(ls, path)
    doc = ls.open_document(uri)
    if doc is not None:
        return DocState(uri, doc.source, doc.version)
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            return DocState(uri, handle.read(), None)
    except FileNotFoundError:
        return DocState(uri, None, None)
    except (OSError, UnicodeDecodeError) as exc:
        log.info("cannot read %s: %s", path, exc)
        return DocState(uri, "\0unreadable", None)


def paths_of(uris: Iterable[str] | None) -> set[Path] | None:
    if uris is None:
        return None
    paths = set()
    for uri in uris:
        path = uri_to_path(uri)
        if path is None:
            raise ValueError(f"not a file URI: {uri!r}")
        paths.add(Path(os.path.realpath(path)))
    return paths


def select(changes: ChangeSet, paths: set[Path] | None) -> list[Change]:
    entries = changes.entries()
    if paths is None:
        return entries
    return [
        c for c in entries if c.path in paths or (c.old_path is not None and c.old_path in paths)
    ]


def build_plan(
    ls: Connection,
    entries: list[Change],
    label: str,
    *,
    confirm: bool,
    changes: ChangeSet | None = None,
) -> EditPlan:
    """`changes`: the session's changeset, whose checks before review label the edit's
    change annotations (Refactor Preview shows "Hunk 1 of b.py (line 2) — 0 new errors")."""
    checks = _check_labels(ls, changes) if changes is not None and confirm else {}
    docs = lambda p: doc_state(ls, p)  # noqa: E731
    builder = EditBuilder(ls.features, ls.workspace.position_codec, docs, checks)
    return builder.build(entries, label=label, confirm=confirm)


def _check_labels(ls: Connection, changes: ChangeSet) -> dict[str, str]:
    """uri → check summary for the session that owns `changes`."""
    for sid, session in ls.host.sessions.items():
        if session.changes is changes:
            return {uri_of(ls, Path(c["path"])): c["summary"] for c in ls.host.review_checks(sid)}
    return {}


async def apply(
    ls: Connection,
    changes: ChangeSet,
    entries: list[Change],
    label: str,
    *,
    confirm: bool,
) -> EditOutcome:
    """Send one WorkspaceEdit for `entries`; drop them from `changes` once applied.

    Serialized per document: while one delivery to a file is in flight (sent, answered,
    its didChange confirmed), the next waits, then is built on the version that one
    produced — so concurrent sessions editing one open buffer rebase onto each other's
    changes instead of failing on a stale version."""
    wanted = set(_touched(entries))
    async with _documents_locked(ls, wanted):
        # what is staged now: a delivery that held the lock may have applied some of it
        current = [c for c in changes.entries() if c.path in wanted]
        return await _apply_now(ls, changes, current, label, confirm=confirm)


class _DocumentLocks:
    """One lock per document path of a connection (deliveries to a file, one at a time)."""

    def __init__(self) -> None:
        self.locks: dict[Path, asyncio.Lock] = {}


_LOCKS: weakref.WeakKeyDictionary[Connection, _DocumentLocks] = weakref.WeakKeyDictionary()


@contextlib.asynccontextmanager
async def _documents_locked(ls: Connection, paths: Iterable[Path]) -> AsyncIterator[None]:
    """Hold the delivery lock of every path (in sorted order: no two deliveries deadlock)."""
    table = _LOCKS.setdefault(ls, _DocumentLocks()).locks
    held: list[asyncio.Lock] = []
    try:
        for path in sorted(set(paths)):  # staged paths are resolved already
            lock = table.setdefault(path, asyncio.Lock())
            await lock.acquire()
            held.append(lock)
        yield
    finally:
        for lock in reversed(held):
            lock.release()


async def _apply_now(
    ls: Connection,
    changes: ChangeSet,
    entries: list[Change],
    label: str,
    *,
    confirm: bool,
) -> EditOutcome:
    """`_apply_text`, with the changes of notebooks the editor syncs as notebooks sent as
    cell operations instead (`agentls.lsp.notebooks`); a path that now leads outside the
    workspace is left to `_apply_text`, which refuses it."""
    from agentls.lsp.notebooks import deliver_notebook, notebook_of

    inside, _ = _contained(ls, entries)
    synced = [c for c in inside if c.kind == "modify" and c.new_text and notebook_of(ls, c.path)]
    if not synced:
        return await _apply_text(ls, changes, entries, label, confirm=confirm)
    outcomes = [await deliver_notebook(ls, changes, c, label) for c in synced]
    rest = [c for c in entries if c not in synced]
    if rest:
        outcomes.append(await _apply_text(ls, changes, rest, label, confirm=confirm))
    return _merged(outcomes)


def _merged(outcomes: list[EditOutcome]) -> EditOutcome:
    applied = [o for o in outcomes if o.applied]
    files = [f for o in (applied or outcomes) for f in o.files]
    reasons = "; ".join(o.reason for o in outcomes if o.reason)
    return EditOutcome(
        files,
        True if applied else outcomes[0].applied,
        reasons or None,
        [c for o in outcomes for c in o.conflicts],
        [x for o in outcomes for x in o.left_out],
    )


async def _apply_text(
    ls: Connection,
    changes: ChangeSet,
    entries: list[Change],
    label: str,
    *,
    confirm: bool,
) -> EditOutcome:
    """Send one WorkspaceEdit for `entries`; drop them from `changes` once applied."""
    entries, escaped = _contained(ls, entries)
    entries, already = _already_applied(ls, changes, entries)
    plan = build_plan(ls, entries, label, confirm=confirm, changes=changes)
    conflicts = [p.uri for p in plan.conflicts]
    left_out = [*escaped, *((p.uri, p.reason) for p in (*plan.conflicts, *plan.skipped))]
    problems = [f"{uri}: {reason}" for uri, reason in escaped] + plan.reasons
    if escaped and not ls.features.shows_outcomes:
        ls.message(types.MessageType.Warning, "agentls: " + "; ".join(problems[: len(escaped)]))
    if not ls.features.shows_outcomes:
        for reason in problems:
            ls.log_line(f"agentls: {reason}", types.MessageType.Warning)
    if plan.edit is None:
        if already:
            return EditOutcome(already, True, "; ".join(problems) or None, conflicts, left_out)
        reason = "; ".join(problems) or "nothing to apply"
        return EditOutcome([], False if problems else None, reason, conflicts, left_out)
    before = _versions(ls, plan.expected)
    try:
        response = await ls.workspace_apply_edit_async(
            types.ApplyWorkspaceEditParams(edit=plan.edit, label=label)
        )
    except Exception as exc:
        log.info("applyEdit failed: %s", exc)
        reason = f"the editor answered applyEdit with an error: {exc}"
        left_out += [(uri, reason) for uri in plan.files]
        return EditOutcome(plan.files, False, reason, conflicts, left_out)
    if not response.applied:
        reason = response.failure_reason or (
            "the editor did not apply the edit (no reason given: the user may have cancelled "
            "the preview, or a document changed since)"
        )
        left_out += [(uri, reason) for uri in plan.files]
        return EditOutcome(plan.files, False, reason, conflicts, left_out)
    unchanged = await _unconfirmed(ls, plan.expected, before)
    unchanged, partly = _partly_applied(ls, changes, plan, unchanged)
    problems += [
        f"{uri}: some hunks applied, the hunks left unticked stay staged" for uri in partly
    ]
    if unchanged:
        # e.g. entries unchecked in VS Code's preview, or Neovim 0.7 skipping a stale
        # versioned edit while answering applied: true — keep those changes staged
        problems.append(
            "the editor reported success but did not change "
            + ", ".join(unchanged)
            + "; those changes stay staged"
        )
        left_out += [(uri, NOT_CHANGED) for uri in unchanged]
    done = [
        change
        for change, uris in zip(plan.included, plan.uris_of, strict=True)
        if not set(uris) & {*unchanged, *partly}
    ]
    changes.record_applied(done)
    changes.discard(_touched(done))
    files = already + [
        u
        for u, change in zip(plan.files, plan.included, strict=True)
        if change in done or u in partly
    ]
    if not files:
        return EditOutcome(plan.files, False, "; ".join(problems), conflicts, left_out)
    return EditOutcome(files, True, "; ".join(problems) or None, conflicts, left_out)


def _partly_applied(
    ls: Connection, changes: ChangeSet, plan: EditPlan, unchanged: list[str]
) -> tuple[list[str], list[str]]:
    """Of the documents that do not show the whole edit, those that show some of its hunks
    (unticked in a preview that lists hunks): what they show becomes the staged change's
    base, the unticked hunks stay staged. Returns the rest, and the partly applied URIs."""
    from agentls.workspace.hunks import applied_part

    rest: list[str] = []
    partly: list[str] = []
    for uri in unchanged:
        doc = ls.open_document(uri)
        change = next(
            (c for c, uris in zip(plan.included, plan.uris_of, strict=True) if uri in uris),
            None,
        )
        if doc is None or change is None or not applied_part(change, doc.source):
            rest.append(uri)
            continue
        changes.record_applied([replace(change, new_text=doc.source)])
        changes.rebase(change.path, doc.source)
        partly.append(uri)
    return rest, partly


def escape_reason(ls: Connection, path: Path) -> str | None:
    """Why `path` must not be delivered: it resolves outside every workspace root now."""
    real = os.path.realpath(path)
    if ls.host.workspace.contains(real):
        return None
    return (
        f"refused: {path} now resolves to {real}, outside the workspace (a folder on its "
        "way was replaced by a symbolic link after the change was staged); nothing was "
        "written there, the change stays staged (reject it, or restore the folder)"
    )


def _contained(ls: Connection, entries: list[Change]) -> tuple[list[Change], list[tuple[str, str]]]:
    """`entries` whose paths still resolve inside the workspace, and (uri, reason) of the
    others, checked now, at delivery, not only when the change was staged."""
    kept: list[Change] = []
    escaped: list[tuple[str, str]] = []
    for change in entries:
        reasons = [escape_reason(ls, p) for p in (change.path, change.old_path) if p is not None]
        reason = next((r for r in reasons if r is not None), None)
        if reason is None:
            kept.append(change)
        else:
            escaped.append((uri_of(ls, change.path), reason))
    return kept, escaped


def _already_applied(
    ls: Connection, changes: ChangeSet, entries: list[Change]
) -> tuple[list[Change], list[str]]:
    """Modifications the editor's text already shows (an earlier accept whose didChange came
    late): dropped from the staged set and reported as applied, not as conflicts."""
    remaining: list[Change] = []
    applied: list[Change] = []
    for change in entries:
        if change.kind == "modify" and change.new_text is not None:
            doc = doc_state(ls, change.path)
            wanted = match_line_endings(change.original_text, change.new_text)
            if doc.text is not None and doc.text == wanted and doc.text != change.original_text:
                applied.append(change)
                continue
        remaining.append(change)
    changes.record_applied(applied)
    changes.discard(_touched(applied))
    return remaining, [uri_of(ls, c.path) for c in applied]


def _versions(ls: Connection, uris: Iterable[str]) -> dict[str, tuple[int | None, str]]:
    """Version and text of each open document, taken just before an edit is sent."""
    found = {}
    for uri in uris:
        doc = ls.open_document(uri)
        if doc is not None:
            found[uri] = (doc.version, doc.source)
    return found


def _confirmed(
    ls: Connection, uri: str, text: str, before: dict[str, tuple[int | None, str]]
) -> bool | None:
    """True: the document shows the edit (its text, or a newer version that contains the
    edit's lines, when the user typed along); False: a newer version without them (the
    editor skipped the edit); None: no didChange has arrived since the edit was sent."""
    doc = ls.open_document(uri)
    if doc is None:
        return True  # not open in the editor: nothing to check against
    if doc.source == text:
        return True
    if uri not in before:
        return None  # opened by the edit itself: wait for its text
    version, old_text = before[uri]
    if doc.version == version:
        return None
    return shows_edit(old_text, text, doc.source)


async def _unconfirmed(
    ls: Connection,
    expected: dict[str, str],
    before: dict[str, tuple[int | None, str]],
    seconds: float = VERIFY_SECONDS,
) -> list[str]:
    """URIs of open documents that do not show the applied edit.

    Decided by each document's version and text (`_confirmed`). Clients that sync before
    they answer are judged at once; for the others a document is confirmed as soon as a
    didChange shows the edit, and counted as unchanged when none has after `seconds`."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + (0.0 if ls.features.syncs_before_apply_reply else seconds)
    while True:
        states = {uri: _confirmed(ls, uri, text, before) for uri, text in expected.items()}
        missing = [uri for uri, state in states.items() if state is not True]
        if not missing or loop.time() >= deadline:
            return missing
        await asyncio.sleep(0.02)


def _touched(entries: list[Change]) -> list[Path]:
    paths = []
    for change in entries:
        paths.append(change.path)
        if change.old_path is not None:
            paths.append(change.old_path)
    return paths


STAGED_REASON = (
    "this editor shows no preview: review them, then accept or reject them (commands, or the "
    "code actions in the affected files)"
)


def staged_outcome(ls: Connection, changes: ChangeSet) -> EditOutcome:
    files = [uri_of(ls, c.path) for c in changes.entries()]
    return EditOutcome(files, None, STAGED_REASON)


async def deliver(
    ls: Connection, session_id: str, changes: ChangeSet, how: Handoff, summary: str
) -> EditOutcome | None:
    """The host's part of delivery; what to do is the runtime's decision
    (`agentls.runtime.delivery`): "write" → apply now without confirmation; "review" → one
    confirmable edit (or keep staged when the editor cannot confirm)."""
    if changes.is_empty():
        return None
    label = f"agentls: {summary}"
    if how == "write":
        from agentls.tools.after_edit import split_held

        entries, kept = split_held(changes)  # `checks.block: "newErrors"` holds failing files
        outcome = (
            await apply(ls, changes, entries, label, confirm=False)
            if entries
            else EditOutcome([], None)
        )
        held = [(uri_of(ls, p), f"kept staged: {why}") for p, why in kept.items()]
        return dataclasses.replace(outcome, left_out=[*outcome.left_out, *held])
    if ls.features.document_changes and ls.features.change_annotations:
        return await apply(ls, changes, changes.entries(), label, confirm=True)
    outcome = staged_outcome(ls, changes)
    if not ls.features.shows_outcomes:
        ls.message(
            types.MessageType.Info,
            f"agentls staged changes to {len(outcome.files)} file(s) in session {session_id}: "
            "accept or reject them with the code actions offered in those files (or the "
            "commands agentls.accept / agentls.reject).",
        )
    return outcome


async def accept_staged(ls: Connection, session_id: str, uris: list[str] | None) -> AcceptPayload:
    changes = ls.host.changes_of(session_id)
    entries = select(changes, paths_of(uris))
    if not entries:
        return {"session": session_id, "files": [], "applied": None, "reason": "nothing staged"}
    outcome = await apply(
        ls, changes, entries, f"agentls: accept session {session_id}", confirm=False
    )
    if outcome.reason and not ls.features.shows_outcomes:
        # accept often comes from a code action, whose result no editor shows
        kind = types.MessageType.Info if outcome.applied else types.MessageType.Warning
        ls.message(kind, f"agentls accept: {outcome.reason}")
    result: AcceptPayload = {"session": session_id, **outcome.to_dict()}
    announce(ls, session_id, "accept", result)
    return result


def reject_staged(ls: Connection, session_id: str, uris: list[str] | None) -> RejectPayload:
    changes = ls.host.changes_of(session_id)
    paths = paths_of(uris)
    restored = changes.discard(paths)
    result: RejectPayload = {"session": session_id, "files": [uri_of(ls, p) for p in restored]}
    announce(ls, session_id, "reject", result)
    return result


def announce(
    ls: Connection, session_id: str, action: str, result: AcceptPayload | RejectPayload
) -> None:
    """Tell the editor's agentls client what an accept or reject did, whoever asked for it
    (its own command, or a code action whose result the editor drops): an `agentls/event`
    `{"type": "edit_result", "session_id", "action", ...result}`."""
    event: dict[str, object] = {
        **result,
        "type": "edit_result",
        "session_id": session_id,
        "action": action,
    }
    event.pop("session", None)
    try:
        ls.protocol.notify("agentls/event", event)
    except Exception:
        log.exception("cannot send the edit result")
