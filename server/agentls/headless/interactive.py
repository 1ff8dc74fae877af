"""`agentls apply SESSION --interactive`: decide hunk by hunk, like `git add -p`.

Each hunk of the session's staged diff is shown with its file and lines, and the user
answers: y apply it, n leave it staged, r reject it (and say why: the reason reaches the
model when the session continues), a apply it and all the rest, d leave it and all the
rest, q quit (the rest stays staged). End of input counts as q: nothing is decided by
accident.

The decisions go to the server as `agentls.reject {hunks, reason}` then `agentls.accept
{hunks}` (see `send` for how the ids, which number the staged diff as it is, stay right).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import NotRequired, TypedDict

from rich.console import Console
from rich.markup import escape

from agentls.agent.protocol.results import AcceptPayload, HunkPayload, StagedPayload
from agentls.headless.client import ServerConnection

Ask = Callable[[str], Awaitable[str | None]]
"""Prints a prompt and returns the answer line (None at end of input)."""

HELP = (
    "y - apply this hunk\n"
    "n - leave it staged\n"
    "r - reject it (you are asked why; the model is told)\n"
    "a - apply this hunk and all the rest\n"
    "d - leave this hunk and all the rest staged\n"
    "q - quit; the rest stays staged\n"
    "? - this help"
)


@dataclass
class Decisions:
    accept: list[HunkPayload] = field(default_factory=list)
    reject: list[tuple[HunkPayload, str | None]] = field(default_factory=list)


class RejectedHunk(TypedDict):
    """A hunk the user rejected, under `rejected` in `agentls apply`'s result."""

    path: str
    index: int
    where: str
    reason: str | None


class ApplyResult(AcceptPayload):
    """`agentls apply`'s result: the accept's, plus the hunks the user rejected."""

    rejected: NotRequired[list[RejectedHunk]]


async def ask_line(prompt: str) -> str | None:
    """`input()` off the event loop; None at end of input."""
    try:
        return await asyncio.to_thread(input, prompt)
    except EOFError:
        return None


async def decide(hunks: list[HunkPayload], console: Console, ask: Ask) -> Decisions:
    """Ask about each hunk in turn; see the module docstring for the answers."""
    decisions = Decisions()
    rest: str | None = None
    for number, hunk in enumerate(hunks, start=1):
        if rest is None:
            _show(console, hunk, number, len(hunks))
        answer = rest or await _answer(console, ask, number, len(hunks))
        if answer in ("a", "d"):
            rest = answer
        if answer in ("y", "a"):
            decisions.accept.append(hunk)
        elif answer == "r":
            reason = await ask("Why (the model is told; empty: no reason)? ")
            decisions.reject.append((hunk, (reason or "").strip() or None))
        elif answer == "q":
            break
    return decisions


async def _answer(console: Console, ask: Ask, number: int, total: int) -> str:
    while True:
        line = await ask(f"({number}/{total}) Apply this hunk [y,n,r,a,d,q,?]? ")
        if line is None:
            return "q"
        answer = line.strip().lower()[:1]
        if answer in ("y", "n", "r", "a", "d", "q"):
            return answer
        console.print(HELP, markup=False)


def _show(console: Console, hunk: HunkPayload, number: int, total: int) -> None:
    console.print(
        f"[bold]{escape(str(hunk['path']))}[/bold] — hunk {hunk['index']} "
        f"({escape(str(hunk['where']))}), {number} of {total}"
    )
    for line in str(hunk["diff"]).splitlines():
        style = "green" if line.startswith("+") else "red" if line.startswith("-") else "cyan"
        console.print(f"[{style}]{escape(line)}[/{style}]")


async def send(conn: ServerConnection, session: str, decisions: Decisions) -> ApplyResult:
    """Reject, then accept; the accept's result, plus `rejected`: `{path, index, where,
    reason}` of each rejected hunk.

    Rejects go first and last hunk first: dropping a hunk renumbers only those after it,
    so each id (and the hunk number the model is told) is the one the user was shown.
    The accepted hunks are then found again by file and text."""
    rejected: list[RejectedHunk] = []
    for hunk, reason in sorted(decisions.reject, key=lambda item: -int(item[0]["id"])):
        argument: dict[str, object] = {"session": session, "hunks": [hunk["id"]]}
        if reason:
            argument["reason"] = reason
        await conn.command("agentls.reject", argument)
        rejected.append(
            {"path": hunk["path"], "index": hunk["index"], "where": hunk["where"], "reason": reason}
        )
    result: ApplyResult = {"session": session, "files": [], "applied": None}
    if decisions.accept:
        staged: StagedPayload = await conn.command("agentls.staged", {"session": session})
        wanted = {_key(h) for h in decisions.accept}
        ids = [h["id"] for h in staged.get("hunks", []) if _key(h) in wanted]
        result = await conn.command("agentls.accept", {"session": session, "hunks": ids})
    result["rejected"] = sorted(rejected, key=lambda r: (str(r["path"]), int(r["index"])))
    return result


def _key(hunk: HunkPayload) -> tuple[str, str]:
    """A hunk by file and text (its header's line numbers move as others are applied)."""
    body = str(hunk["diff"]).split("\n", 1)
    return str(hunk["path"]), body[1] if len(body) > 1 else ""
