"""`/accept N…` and `/reject N… <reason>` over ACP: decide staged hunks by number.

A rejected hunk leaves the staged set and the model hears it, with the reason, with its
next request; an accepted part of a file is written (rebased like any write), and the rest
of that file stays staged on top of it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from agentls.acp.delivery import write_changes
from agentls.agent.persistence.staged import relative_to, review_note
from agentls.errors import SessionBusy
from agentls.host import EditOutcome
from agentls.workspace.hunks import FileHunks, Hunk, drop, part, select

if TYPE_CHECKING:
    from agentls.acp.workspace import AcpWorkspace
    from agentls.agent.run.session import AgentSession


async def accept(
    workspace: AcpWorkspace, session: AgentSession, ids: list[int], reason: str | None
) -> str:
    """`/accept N…`: write those hunks; the message to show."""
    changes = session.changes
    selection = select(changes.entries(), ids)
    outcomes: list[EditOutcome] = []
    if selection.whole:
        whole = [entry.change for entry in selection.whole]
        outcomes.append(await write_changes(workspace, session.id, changes, whole))
    for entry, picked in selection.partial:
        outcomes.append(await _accept_part(workspace, session, entry, picked))
    roots = workspace.host.workspace.roots
    if reason:
        session.tell_model(review_note("accepted", selection.hunks, reason, relative_to(roots)))
    written = sum(len(o.files) for o in outcomes if o.applied)
    text = f"Accepted {_names(selection.hunks, roots)}: wrote {written} file(s)."
    problems = "; ".join(o.reason for o in outcomes if o.reason)
    return text + (f" {problems}" if problems else "")


async def _accept_part(
    workspace: AcpWorkspace, session: AgentSession, entry: FileHunks, picked: list[Hunk]
) -> EditOutcome:
    only, partial = part(entry, picked)
    outcome = await write_changes(workspace, session.id, only, only.entries())
    if only.is_empty():  # written: the rest of the file stays staged on top of it
        session.changes.record_applied(only.applied)
        session.changes.rebase(entry.change.path, partial)
    return outcome


def reject(
    workspace: AcpWorkspace, session: AgentSession, ids: list[int], reason: str | None
) -> str:
    """`/reject N… <reason>`: unstage those hunks and tell the model; the message to show."""
    selection = select(session.changes.entries(), ids)
    drop(session.changes, selection)
    roots = workspace.host.workspace.roots
    session.tell_model(review_note("rejected", selection.hunks, reason, relative_to(roots)))
    told = "the agent is told why" if reason else "the agent is told (no reason given)"
    return f"Rejected {_names(selection.hunks, roots)}; {told} with your next prompt."


def _names(hunks: list[Hunk], roots: list[Path]) -> str:
    relative = relative_to(roots)
    return ", ".join(f"hunk {h.id} ({relative(h.path)}, {h.where()})" for h in hunks)


def rewind(workspace: AcpWorkspace, session_id: str, argument: str) -> str:
    """`/rewind`: the turns with their prompts and files; `/rewind N`: back to the end of
    turn N (the reverse of changes written since is staged: `/accept` writes it)."""
    core = workspace.host.sessions.get(session_id)
    if core is None:
        return "This session has no turns yet."
    relative = relative_to(workspace.host.workspace.roots)
    text = argument.strip()
    if not text:
        turns = core.turn_list()
        if not turns:
            return "This session has no turns yet."
        lines = []
        for t in turns:
            files = ", ".join(relative(Path(f)) for f in t["files"]) or "no files"
            lines.append(f"{t['turn']}. {t['prompt']} — {files}")
        return "\n".join(lines)
    if not text.isdigit():
        return "Give the turn to go back to: /rewind 2 (/rewind alone lists the turns)."
    try:
        result = core.rewind(int(text))
    except (ValueError, SessionBusy) as exc:
        return str(exc)
    lines = [f"Back at the end of turn {result['turn']}."]
    lines += [f"Dropped turn {d['turn']}: {d['prompt']}" for d in result["dropped"]]
    if result["reverted"]:
        names = ", ".join(relative(Path(p)) for p in result["reverted"])
        lines.append(f"Changes written since are staged in reverse ({names}): /accept writes them.")
    return "\n".join(lines)
