"""`agentls rewind SESSION [--turn N]`: list a session's turns, or roll it back to one.

Without `--turn`: each turn with its prompt and the files it changed. With it: the server
(`agentls.rewind`) cuts the history back to the end of that turn, restores its staged
changeset and stages the reverse of what was applied since; nothing is written here —
`agentls apply SESSION` writes the reversal (rebased, conflicts left out and reported).

Exit code: 0 done, 1 refused (e.g. a turn before a compaction), 2 unknown session.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from rich.markup import escape

from agentls.agent.persistence.store import SessionStateError, SessionStore
from agentls.headless.client import ServerConnection, ServerError
from agentls.headless.ui import make_console

if TYPE_CHECKING:
    from agentls.agent.protocol.results import RewindPayload, TurnPayload


async def rewind_session(
    session: str, workspace: Path | None, turn: int | None, *, as_json: bool = False
) -> int:
    store = SessionStore()
    try:
        state = store.load(session)
    except SessionStateError as exc:
        sys.stderr.write(f"agentls rewind: {exc}\n")
        return 2
    root = (workspace or Path(state.workspace[0] if state.workspace else ".")).resolve()
    try:
        async with ServerConnection(root) as conn:
            if turn is None:
                status = await conn.command("agentls.staged", {"session": session})
                del status  # loads the session in the server
                found = await conn.command("agentls.status", {})
                entry = next(s for s in found["sessions"] if s["id"] == session)
                return _list(session, entry.get("history", []), as_json)
            result = await conn.command("agentls.rewind", {"session": session, "turn": turn})
    except ServerError as exc:
        sys.stderr.write(f"agentls rewind: {exc}\n")
        return 1
    return _report(result, as_json)


def _list(session: str, history: list[TurnPayload], as_json: bool) -> int:
    if as_json:
        sys.stdout.write(json.dumps({"session": session, "turns": history}, indent=2) + "\n")
        return 0
    console = make_console(sys.stdout)
    if not history:
        console.print(f"Session {escape(session)} has no turns to rewind to.")
    for item in history:
        files = ", ".join(Path(f).name for f in item["files"]) or "no files"
        console.print(f"{item['turn']}. {escape(item['prompt'])} [dim]— {escape(files)}[/dim]")
    return 0


def _report(result: RewindPayload, as_json: bool) -> int:
    if as_json:
        sys.stdout.write(json.dumps(result, indent=2) + "\n")
        return 0
    console = make_console(sys.stdout)
    session = escape(str(result["session"]))
    console.print(f"Session {session} is back at the end of turn {result['turn']}.")
    for item in result["dropped"]:
        console.print(f"[yellow]dropped:[/yellow] turn {item['turn']}: {escape(item['prompt'])}")
    if result["reverted"]:
        names = ", ".join(escape(Path(p).name) for p in result["reverted"])
        console.print(
            f"Changes applied since are staged in reverse ({names}): write them with "
            f"`agentls apply {session}` (rebased; a file you changed on those lines is left "
            "out and reported)."
        )
    if result["staged"]:
        console.print("Staged: " + ", ".join(escape(Path(p).name) for p in result["staged"]))
    return 0
