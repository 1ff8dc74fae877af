"""Code actions: the agent where the user is looking.

- "Fix with agentls" on a range with diagnostics: `agentls.run` with the diagnostics and
  the code as context.
- "Ask agentls about this selection" on a non-empty selection: `agentls.ask`.
- "Accept/Reject agentls changes" on a document some session has staged edits for — the
  review path for clients without change-annotation previews (Helix, Neovim, Emacs).

Each action is a `Command` whose one argument object is exactly what the command takes,
so executing it goes through the same validation as a direct call.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from lsprotocol import types

from agentls.lsp.contract import Connection
from agentls.lsp.uris import uri_to_path

MAX_DIAGNOSTICS = 20


def _range_arg(rng: types.Range) -> dict[str, object]:
    return {
        "start": {"line": rng.start.line, "character": rng.start.character},
        "end": {"line": rng.end.line, "character": rng.end.character},
    }


def _cover(ranges: list[types.Range]) -> types.Range:
    start = min((r.start for r in ranges), key=lambda p: (p.line, p.character))
    end = max((r.end for r in ranges), key=lambda p: (p.line, p.character))
    return types.Range(start, end)


def fix_prompt(diagnostics: list[types.Diagnostic]) -> str:
    lines = []
    for d in diagnostics[:MAX_DIAGNOSTICS]:
        source = f"{d.source} " if d.source else ""
        code = f"[{d.code}] " if d.code is not None else ""
        lines.append(f"- line {d.range.start.line + 1}: {source}{code}{d.message}")
    return (
        "Fix these problems reported by the editor in the selected code, with minimal "
        "changes:\n" + "\n".join(lines)
    )


def code_actions(ls: Connection, params: types.CodeActionParams) -> list[types.CodeAction]:
    uri = params.text_document.uri
    actions: list[types.CodeAction] = []
    diagnostics = list(params.context.diagnostics)
    wanted = params.context.only
    if diagnostics and _kind_wanted(wanted, types.CodeActionKind.QuickFix):
        rng = _cover([params.range, *(d.range for d in diagnostics)])
        arguments: dict[str, object] = {
            "prompt": fix_prompt(diagnostics),
            "uri": uri,
            "range": _range_arg(rng),
        }
        actions.append(
            types.CodeAction(
                title="Fix with agentls",
                kind=types.CodeActionKind.QuickFix,
                diagnostics=diagnostics,
                command=types.Command(
                    title="Fix with agentls", command="agentls.run", arguments=[arguments]
                ),
            )
        )
    selected = params.range.start != params.range.end
    if selected and _kind_wanted(wanted, types.CodeActionKind.Empty):
        arguments = {
            "prompt": "Explain the selected code: what it does, and anything surprising.",
            "uri": uri,
            "range": _range_arg(params.range),
        }
        actions.append(
            types.CodeAction(
                title="Ask agentls about this selection",
                kind=types.CodeActionKind.Empty,
                command=types.Command(
                    title="Ask agentls", command="agentls.ask", arguments=[arguments]
                ),
            )
        )
    actions.extend(_staged_actions(ls, uri, wanted))
    return actions


def _staged_actions(
    ls: Connection, uri: str, wanted: Sequence[str] | None
) -> list[types.CodeAction]:
    path = uri_to_path(uri)
    if path is None or not ls.has_host or not _kind_wanted(wanted, types.CodeActionKind.Empty):
        return []
    actions = []
    for session in ls.host.sessions_touching(Path(os.path.realpath(path))):
        staged: dict[str, object] = {"session": session, "uris": [uri]}
        for verb, command in (("Accept", "agentls.accept"), ("Reject", "agentls.reject")):
            title = f"{verb} agentls changes to this file (session {session})"
            actions.append(
                types.CodeAction(
                    title=title,
                    kind=types.CodeActionKind.Empty,
                    command=types.Command(title=title, command=command, arguments=[staged]),
                )
            )
    return actions


def _kind_wanted(only: Sequence[str] | None, kind: str) -> bool:
    if not only:
        return True
    return any(kind == k or kind.startswith(f"{k}.") for k in only)


def setup(server: Connection) -> None:
    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(
            code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.Empty]
        ),
    )
    def code_action(ls: Connection, params: types.CodeActionParams) -> list[types.CodeAction]:
        return code_actions(ls, params)
