"""`agentls.rewind {session, turn}`: a session back to the end of one of its turns.

The core does the rollback (`AgentSession.rewind`: history, staged changeset, the reverse
of what was applied since, staged). Here the reverse changes are offered at once where the
editor previews edits (VS Code's Refactor Preview, with confirmation), built on the
current buffers like any delivery: a file the user changed on those lines is reported as a
conflict and left as it is. Elsewhere they stay staged, to accept or reject as usual.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentls.lsp.arguments import RewindArgs

if TYPE_CHECKING:
    from agentls.lsp.contract import Connection


async def rewind(ls: Connection, args: RewindArgs) -> dict[str, Any]:
    """`{session, turn, dropped, staged, reverted, edit}`; `edit`: what became of the
    reverse changes offered to the editor (None: they stay staged)."""
    from agentls.lsp.delivery import apply, paths_of, select

    session = ls.host.session(args.session)
    result: dict[str, Any] = dict(session.rewind(args.turn))
    result["edit"] = None
    reverted = [p for p in result["reverted"]]
    if reverted and ls.features.document_changes and ls.features.change_annotations:
        entries = select(session.changes, paths_of([_uri(p) for p in reverted]))
        label = f"agentls: rewind session {session.id} to turn {args.turn}"
        outcome = await apply(ls, session.changes, entries, label, confirm=True)
        result["edit"] = outcome.to_dict()
        result["staged"] = session.staged_paths()
    return result


def _uri(path: str) -> str:
    from pathlib import Path

    return Path(path).as_uri()
