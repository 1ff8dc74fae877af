"""Sending staged edits to the editor: review, auto, accept and reject.

`workspace/applyEdit` is awaited without holding any lock: VS Code keeps a request with
`needsConfirmation` edits pending until the user acts in its refactor preview, and the rest
of the server must stay responsive meanwhile. Changes are dropped from the session only
after the client answers `applied: true`; on `applied: false` (or an error) they stay
staged and the result carries the client's reason.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from agentls.host import EditOutcome
from agentls.lsp.edits import DocState, EditBuilder, EditPlan
from agentls.lsp.sync import uri_to_path
from agentls.workspace.changes import Change, ChangeSet

if TYPE_CHECKING:
    from agentls.agent.context import RunMode
    from agentls.agent.results import AcceptPayload, RejectPayload
    from agentls.lsp.server import AgentLanguageServer

log = logging.getLogger(__name__)

VERIFY_SECONDS = 1.0
"""How long to wait for the didChange that shows an applied edit."""


def uri_of(ls: AgentLanguageServer, path: Path) -> str:
    """The URI the editor knows `path` by (its open document's), else a file URI."""
    return ls.open_uris.get(path) or path.as_uri()


def doc_state(ls: AgentLanguageServer, path: Path) -> DocState:
    """What the editor has for `path` now: its open buffer, else the file on disk."""
    uri = uri_of(ls, path)
    doc = ls.workspace.text_documents.get(uri)
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


def _paths(uris: Iterable[str] | None) -> set[Path] | None:
    if uris is None:
        return None
    paths = set()
    for uri in uris:
        path = uri_to_path(uri)
        if path is None:
            raise ValueError(f"not a file URI: {uri!r}")
        paths.add(Path(os.path.realpath(path)))
    return paths


def _select(changes: ChangeSet, paths: set[Path] | None) -> list[Change]:
    entries = changes.entries()
    if paths is None:
        return entries
    return [
        c for c in entries if c.path in paths or (c.old_path is not None and c.old_path in paths)
    ]


def build_plan(
    ls: AgentLanguageServer, entries: list[Change], label: str, *, confirm: bool
) -> EditPlan:
    builder = EditBuilder(ls.features, ls.workspace.position_codec, lambda p: doc_state(ls, p))
    return builder.build(entries, label=label, confirm=confirm)


async def apply(
    ls: AgentLanguageServer,
    changes: ChangeSet,
    entries: list[Change],
    label: str,
    *,
    confirm: bool,
) -> EditOutcome:
    """Send one WorkspaceEdit for `entries`; drop them from `changes` once applied."""
    plan = build_plan(ls, entries, label, confirm=confirm)
    conflicts = [p.uri for p in plan.conflicts]
    problems = plan.reasons
    for reason in problems:
        ls.log_line(f"agentls: {reason}", types.MessageType.Warning)
    if plan.edit is None:
        reason = "; ".join(problems) or "nothing to apply"
        return EditOutcome([], False if problems else None, reason, conflicts)
    try:
        response = await ls.workspace_apply_edit_async(
            types.ApplyWorkspaceEditParams(edit=plan.edit, label=label)
        )
    except Exception as exc:
        log.info("applyEdit failed: %s", exc)
        return EditOutcome(
            plan.files, False, f"the editor answered applyEdit with an error: {exc}", conflicts
        )
    if not response.applied:
        reason = response.failure_reason or (
            "the editor did not apply the edit (no reason given: the user may have cancelled "
            "the preview, or a document changed since)"
        )
        return EditOutcome(plan.files, False, reason, conflicts)
    unchanged = await _unchanged_documents(ls, plan.expected)
    if unchanged:
        # e.g. entries unchecked in VS Code's preview, or Neovim 0.7 skipping a stale
        # versioned edit while answering applied: true — keep those changes staged
        problems.append(
            "the editor reported success but did not change "
            + ", ".join(unchanged)
            + "; those changes stay staged"
        )
    done = [
        change
        for change, uris in zip(plan.included, plan.uris_of, strict=True)
        if not set(uris) & set(unchanged)
    ]
    changes.discard(_touched(done))
    files = [u for u, change in zip(plan.files, plan.included, strict=True) if change in done]
    if not files:
        return EditOutcome(plan.files, False, "; ".join(problems), conflicts)
    return EditOutcome(files, True, "; ".join(problems) or None, conflicts)


async def _unchanged_documents(
    ls: AgentLanguageServer, expected: dict[str, str], seconds: float = VERIFY_SECONDS
) -> list[str]:
    """URIs of open documents that do not show the applied text (after the client's
    didChange has had time to arrive); documents the editor has not opened can't be
    checked and count as applied."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while True:
        pending = [
            uri
            for uri, text in expected.items()
            if (doc := ls.workspace.text_documents.get(uri)) is not None and doc.source != text
        ]
        if not pending or loop.time() >= deadline:
            return pending
        await asyncio.sleep(0.02)


def _touched(entries: list[Change]) -> list[Path]:
    paths = []
    for change in entries:
        paths.append(change.path)
        if change.old_path is not None:
            paths.append(change.old_path)
    return paths


def staged_outcome(ls: AgentLanguageServer, changes: ChangeSet) -> EditOutcome:
    files = [uri_of(ls, c.path) for c in changes.entries()]
    return EditOutcome(
        files,
        None,
        "staged for review: accept with agentls.accept or reject with agentls.reject "
        "(also offered as code actions in the affected files)",
    )


async def deliver(
    ls: AgentLanguageServer,
    session_id: str,
    changes: ChangeSet,
    mode: RunMode,
    summary: str,
    *,
    final: bool,
) -> EditOutcome | None:
    """The host's hook: review → one confirmable edit at the end (or keep staged);
    auto → apply now without confirmation."""
    if changes.is_empty():
        return None
    label = f"agentls: {summary}"
    if mode == "auto":
        return await apply(ls, changes, changes.entries(), label, confirm=False)
    if not final:
        return None
    if ls.features.document_changes and ls.features.change_annotations:
        return await apply(ls, changes, changes.entries(), label, confirm=True)
    outcome = staged_outcome(ls, changes)
    ls.message(
        types.MessageType.Info,
        f"agentls staged changes to {len(outcome.files)} file(s) in session {session_id}: "
        "run agentls.accept to apply them or agentls.reject to discard them.",
    )
    return outcome


async def accept_staged(
    ls: AgentLanguageServer, session_id: str, uris: list[str] | None
) -> AcceptPayload:
    changes = ls.host.changes_of(session_id)
    entries = _select(changes, _paths(uris))
    if not entries:
        return {"session": session_id, "files": [], "applied": None, "reason": "nothing staged"}
    outcome = await apply(
        ls, changes, entries, f"agentls: accept session {session_id}", confirm=False
    )
    if outcome.reason:
        # accept often comes from a code action, whose result no editor shows
        kind = types.MessageType.Info if outcome.applied else types.MessageType.Warning
        ls.message(kind, f"agentls accept: {outcome.reason}")
    return {"session": session_id, **outcome.to_dict()}


def reject_staged(
    ls: AgentLanguageServer, session_id: str, uris: list[str] | None
) -> RejectPayload:
    changes = ls.host.changes_of(session_id)
    paths = _paths(uris)
    restored = changes.discard(paths)
    return {"session": session_id, "files": [uri_of(ls, p) for p in restored]}
