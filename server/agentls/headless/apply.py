"""`agentls apply SESSION`: write a reviewed run's staged edits, without running the model.

A dry run (`agentls run` without `--apply`) leaves its edits staged in the session, and the
session saves them with their base texts (`SessionStore.staged_changes`). This command
says up front which files changed since the edits were staged (`agent.persistence.staged`), then
starts `agentls serve` and asks it to accept the session's edits, exactly as an editor's
"Accept" does: each edit is rebased onto the file as it is now, or left staged as a
conflict when the same lines changed; a path that now leads outside the workspace is
refused. The CLI is the editor here: it writes what the server sends (atomically, every
path checked again) and prints what was written and what was not, and why.

Exit code: 0 when everything staged was written, 1 when something was left out (a
conflict, a refusal), 2 for an unknown session.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from rich.markup import escape

from agentls.agent.persistence.staged import StaleChange, stale_changes
from agentls.agent.persistence.store import SessionStateError, SessionStore
from agentls.headless.client import ServerConnection, ServerError
from agentls.headless.edits import EditError, EditLedger, read_text
from agentls.headless.ui import files_table, make_console, print_diff

if TYPE_CHECKING:
    from agentls.headless.interactive import ApplyResult


async def apply_session(
    session: str,
    workspace: Path | None,
    *,
    as_json: bool = False,
    env: Mapping[str, str] | None = None,
    interactive: bool = False,
) -> int:
    """`interactive`: ask hunk by hunk (`agentls.headless.interactive`)."""
    store = SessionStore()
    try:
        state = store.load(session)
        changes = store.staged_changes(session)
    except SessionStateError as exc:
        sys.stderr.write(f"agentls apply: {exc}\n")
        return 2
    root = (workspace or Path(state.workspace[0] if state.workspace else ".")).resolve()
    if not root.is_dir():
        sys.stderr.write(f"agentls apply: workspace {root} is not a folder\n")
        return 2
    if changes.is_empty():
        return _report({"session": session, "files": [], "applied": None}, [], "", as_json)
    stale = stale_changes(changes, _current_text)
    ledger = EditLedger(root, apply=True)
    try:
        async with ServerConnection(root, env=env, ledger=ledger) as conn:
            result: ApplyResult
            if interactive:
                result = await _by_hunk(conn, session)
            else:
                result = await conn.command("agentls.accept", {"session": session})
    except ServerError as exc:
        sys.stderr.write(f"agentls apply: {exc}\n")
        return 1
    return _report(result, stale, ledger.diff(), as_json, ledger)


async def _by_hunk(conn: ServerConnection, session: str) -> ApplyResult:
    from agentls.headless.interactive import ask_line, decide, send

    staged = await conn.command("agentls.staged", {"session": session})
    decisions = await decide(staged.get("hunks", []), make_console(sys.stdout), ask_line)
    return await send(conn, session, decisions)


def _current_text(path: Path) -> str | None:
    try:
        return read_text(path)
    except EditError:
        return "\0 not text"  # differs from any base text: reported as changed


def _report(
    result: ApplyResult,
    stale: list[StaleChange],
    diff: str,
    as_json: bool,
    ledger: EditLedger | None = None,
) -> int:
    left_out = result.get("left_out") or []
    code = 1 if left_out or result.get("applied") is False else 0
    if as_json:
        payload = {
            **result,
            "stale": [{"path": str(s.path), "reason": s.reason} for s in stale],
            "diff": diff,
        }
        sys.stdout.write(json.dumps(payload, ensure_ascii=False, indent=2) + "\n")
        return code
    console = make_console(sys.stdout)
    session = result.get("session")
    for hunk in result.get("rejected") or []:
        said = f": {hunk['reason']}" if hunk.get("reason") else ""
        console.print(
            f"[yellow]rejected:[/yellow] hunk {hunk['index']} of {escape(str(hunk['path']))} "
            f"({escape(str(hunk['where']))}){escape(said)}"
        )
    if not result.get("files") and not left_out:
        console.print(f"Nothing staged in session {escape(str(session))}.")
        return 0
    for item in stale:
        console.print(
            f"[yellow]changed since staged:[/yellow] {escape(str(item.path))} — "
            f"{escape(item.reason)} (rebased where the changes do not overlap)"
        )
    if ledger is not None and ledger.file_changes():
        console.print(files_table(ledger.file_changes(), ledger.relative, "written"))
    for left in left_out:
        console.print(
            f"[red]not applied:[/red] {escape(str(left.get('uri')))} — "
            f"{escape(str(left.get('reason')))}"
        )
    if left_out:
        console.print(
            f"[dim]Those edits stay staged in session {escape(str(session))}: fix the file "
            "and run `agentls apply` again, or continue the session with "
            "`agentls resume`.[/dim]"
        )
    print_diff(console, diff)
    return code
