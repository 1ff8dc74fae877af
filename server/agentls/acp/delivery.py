"""Writing a session's staged edits: through the client when it offers `fs/write_text_file`
(the editor records undo, and an open buffer changes in place), else to disk.

When edits are written is the runtime's decision (`agentls.runtime.delivery`, made by the
`AgentHost` for every host): this module is told "write" or "review" and never looks at
permission modes.

- auto: each write tool's change right after it was staged (the permission policy asked
  before the call, with the diff, unless the mode or a rule allows it);
- review: once, at the end of the run. In `acceptEdits` and `bypassPermissions` mode they
  are written ("write"); otherwise ("review") the user is asked with the
  whole diff — Apply, Keep staged (the default when the prompt goes away or is cancelled;
  `/accept` writes them later) or Discard;
- plan: nothing is staged, nothing is written.

Each file is checked against what the agent read: the client's text (or the disk) must
still be that text, or the agent's hunks are rebased onto the user's changes when they do
not touch; otherwise the file stays staged as a conflict. The user's text is never
overwritten.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import tempfile
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol, TypeVar

from acp.schema import (
    PermissionOption,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
)

from agentls.acp.approvals import ask_client, text_content
from agentls.acp.hunks import checks_content, hunk_hint, review_content
from agentls.agent.persistence.staged import relative_to
from agentls.errors import WorkspaceError
from agentls.host import EditOutcome
from agentls.workspace.changes import Change, ChangeSet
from agentls.workspace.merge import match_line_endings, rebase

if TYPE_CHECKING:
    from collections.abc import Awaitable

    from agentls.acp.client import ClientLink
    from agentls.host import AgentHost
    from agentls.runtime.delivery import Handoff

log = logging.getLogger(__name__)
T = TypeVar("T")


class DeliveryFolder(Protocol):
    """What writing edits needs of a session folder (`agentls.acp.workspace.AcpWorkspace`,
    which imports this module to deliver its host's edits: naming it here would close an
    import cycle)."""

    @property
    def link(self) -> ClientLink: ...
    @property
    def host(self) -> AgentHost: ...
    def inside(self, path: Path) -> Path: ...
    async def current_text(self, session_id: str, path: Path) -> str | None: ...
    async def write_text(self, session_id: str, path: Path, text: str) -> None: ...
    async def unless_cancelled(self, session_id: str, waiting: Awaitable[T]) -> T | None: ...


REVIEW_OPTIONS = [
    PermissionOption(option_id="apply", name="Apply", kind="allow_once"),
    PermissionOption(option_id="keep", name="Keep staged", kind="reject_once"),
    PermissionOption(option_id="discard", name="Discard", kind="reject_always"),
]
KEPT = "kept staged: accept them with /accept, or discard them with /reject"


async def deliver(
    workspace: DeliveryFolder,
    session_id: str,
    changes: ChangeSet,
    how: Handoff,
    summary: str,
    *,
    final: bool = False,
) -> EditOutcome | None:
    """The host's `EditorPort.deliver` for ACP sessions: what to do is the runtime's
    decision (`how`, from `agentls.runtime.delivery`), how it is done is ACP's."""
    if changes.is_empty():
        return None
    if how == "write":
        from agentls.tools.after_edit import split_held

        entries, kept = split_held(changes)  # `checks.block: "newErrors"` holds failing files
        outcome = (
            await write_changes(workspace, session_id, changes, entries)
            if entries
            else EditOutcome([], None)
        )
        held = [(p.as_uri(), f"kept staged: {why}") for p, why in kept.items()]
        if kept and final:
            _tell_held(workspace, session_id, kept)
        return dataclasses.replace(outcome, left_out=[*outcome.left_out, *held])
    return await _review(workspace, session_id, changes, summary)


def _tell_held(workspace: DeliveryFolder, session_id: str, kept: dict[Path, str]) -> None:
    """The files `checks.block: "newErrors"` kept staged at the end of an auto run, with
    the reasons, as a tool call the user sees (the model heard it in its tool results)."""
    relative = relative_to(workspace.host.workspace.roots)
    lines = [f"{relative(path)}: {why}" for path, why in kept.items()]
    lines.append("They are not written: /accept writes them anyway, /reject drops them.")
    workspace.link.send(
        session_id,
        ToolCallStart(
            session_update="tool_call",
            tool_call_id=f"held-{uuid.uuid4().hex[:12]}",
            title=f"Kept staged by the checks (checks.block: newErrors): {len(kept)} file(s)",
            kind="edit",
            status="failed",
            content=[text_content("\n".join(lines))],
            locations=[ToolCallLocation(path=str(p)) for p in kept],
        ),
    )


async def _review(
    workspace: DeliveryFolder, session_id: str, changes: ChangeSet, summary: str
) -> EditOutcome:
    """One question for all of a run's edits, showing every diff."""
    entries = changes.entries()
    files = [c.path.as_uri() for c in entries]
    call_id = f"review-{uuid.uuid4().hex[:12]}"
    title = f"Apply the changes to {len(entries)} file(s)? ({summary}){hunk_hint(entries)}"
    diffs = review_content(entries, workspace.host.workspace.roots)
    handle = workspace.host.runs.get(session_id)
    if handle is not None and handle.checks:
        diffs.insert(0, checks_content(handle.checks, workspace.host.workspace.roots))
    locations = [ToolCallLocation(path=str(c.path)) for c in entries]
    link = workspace.link
    link.send(
        session_id,
        ToolCallStart(
            session_update="tool_call",
            tool_call_id=call_id,
            title=title,
            kind="edit",
            status="pending",
            content=list(diffs),
            locations=locations,
        ),
    )
    request = ToolCallUpdate(tool_call_id=call_id, title=title, kind="edit", status="pending")
    try:
        # a `session/cancel` while the question is open ends the prompt: the edits stay staged
        chosen = await workspace.unless_cancelled(
            session_id, ask_client(link, session_id, request, REVIEW_OPTIONS)
        )
    except ConnectionError:
        chosen = None
    status: Literal["completed", "failed"]
    said = ""
    if chosen == "apply":
        outcome = await write_changes(workspace, session_id, changes, entries)
        status = "completed" if outcome.applied else "failed"
    elif chosen == "discard":
        changes.discard()
        outcome = EditOutcome(files, False, "the user discarded them")
        status = "failed"
    else:  # kept staged: nothing failed, and the call says how to apply them later
        outcome = EditOutcome(files, None, KEPT, left_out=[(f, KEPT) for f in files])
        status = "completed"
        said = f"The edits to {len(entries)} file(s) are {KEPT}."
    link.send(
        session_id,
        ToolCallProgress(
            session_update="tool_call_update",
            tool_call_id=call_id,
            status=status,
            content=[*diffs, text_content(said)] if said else None,
        ),
    )
    return outcome


async def write_changes(
    workspace: DeliveryFolder, session_id: str, changes: ChangeSet, entries: list[Change]
) -> EditOutcome:
    """Write `entries`; each written one leaves the staged set, the others stay (with why)."""
    written: list[str] = []
    left_out: list[tuple[str, str]] = []
    conflicts: list[str] = []
    done: list[Path] = []
    for change in entries:
        uri = change.path.as_uri()
        problem = await _write_one(workspace, session_id, change)
        if problem is None:
            changes.record_applied([change])
            written.append(uri)
            done.extend(p for p in (change.path, change.old_path) if p is not None)
            continue
        left_out.append((uri, problem))
        if problem.startswith(CONFLICT):
            conflicts.append(uri)
    changes.discard(done)
    if not written:
        reason = "; ".join(f"{Path(u).name}: {why}" for u, why in left_out) or None
        return EditOutcome([u for u, _ in left_out], False, reason, conflicts, left_out)
    reason = "; ".join(why for _, why in left_out) or None
    return EditOutcome(written, True, reason, conflicts, left_out)


CONFLICT = "conflict:"


async def _write_one(workspace: DeliveryFolder, session_id: str, change: Change) -> str | None:
    """Write one change; None when done, else why it stays staged."""
    try:
        if change.kind in ("create", "modify"):
            return await _write_text(workspace, session_id, change)
        if change.kind == "delete":
            return await _delete(workspace, session_id, change)
        return await _rename(workspace, session_id, change)
    except WorkspaceError as exc:
        return str(exc)
    except OSError as exc:
        return f"cannot write {change.path}: {exc.strerror or exc}"
    except Exception as exc:  # the client refused the write (a JSON-RPC error)
        log.info("writing %s failed: %s", change.path, exc)
        return f"the editor did not write it: {exc}"


async def _write_text(workspace: DeliveryFolder, session_id: str, change: Change) -> str | None:
    assert change.new_text is not None
    base = change.original_text
    wanted = match_line_endings(base, change.new_text)
    current = await workspace.current_text(session_id, change.path)
    if current == wanted:
        return None  # already there (an earlier write, or the user made the same change)
    if current == base:
        target = wanted
    elif base is not None and current is not None:
        merged = rebase(base, wanted, current)
        if merged is None:
            return (
                f"{CONFLICT} the file changed since the agent read it, on the lines the agent "
                "changed; the agent's version stays staged"
            )
        target = merged
    else:
        return f"{CONFLICT} the file was {'created' if base is None else 'deleted'} meanwhile"
    await workspace.write_text(session_id, change.path, target)
    return None


async def _delete(workspace: DeliveryFolder, session_id: str, change: Change) -> str | None:
    path = workspace.inside(change.path)
    current = await workspace.current_text(session_id, path)
    if current is None and not path.exists():
        return None
    if change.original_text is not None and current != change.original_text:
        return f"{CONFLICT} the file changed since the agent read it; not deleted"
    path.unlink()
    workspace.host.workspace.close_buffer(path)
    return None


async def _rename(workspace: DeliveryFolder, session_id: str, change: Change) -> str | None:
    assert change.old_path is not None
    source = workspace.inside(change.old_path)
    target = workspace.inside(change.path)
    if target.exists():
        return f"{CONFLICT} {target.name} exists now; not renamed"
    current = await workspace.current_text(session_id, source)
    if change.original_text is not None and current != change.original_text:
        return f"{CONFLICT} {source.name} changed since the agent read it; not renamed"
    target.parent.mkdir(parents=True, exist_ok=True)
    os.rename(source, target)
    workspace.host.workspace.close_buffer(source)
    if change.new_text is not None:
        await workspace.write_text(session_id, target, change.new_text)
    return None


def write_disk(path: Path, text: str) -> None:
    """Atomically (a temporary file renamed over it), keeping the file's mode."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o7777 if path.exists() else None
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".agentls", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
