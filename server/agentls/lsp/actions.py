"""What each command does, in LSP terms, on top of the host (validated arguments in).

Kept apart from `commands` (registration and argument validation) so code actions and
tests can call the same functions.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from agentls.agent.run.mentions import EDITOR_CONTEXT
from agentls.lsp.trust import trust_of
from agentls.lsp.uris import uri_to_path

if TYPE_CHECKING:
    from agentls.agent.framework.context import RunMode
    from agentls.agent.protocol.results import (
        AcceptPayload,
        CancelPayload,
        CompactionPayload,
        RejectPayload,
        RunPayload,
        SessionsPayload,
        StagedPayload,
        StartedPayload,
        StatusPayload,
        ToolCallPayload,
        ToolResultPayload,
        ToolsPayload,
    )
    from agentls.host import RunHandle
    from agentls.lsp.arguments import (
        CancelArgs,
        CompactArgs,
        EditArgs,
        RunArgs,
        StagedArgs,
        StatusArgs,
        ToolArgs,
        ToolResultArgs,
        ToolsArgs,
        TrustArgs,
    )
    from agentls.lsp.contract import Connection
    from agentls.lsp.prompt_commands import CommandsPayload

log = logging.getLogger(__name__)

SHORT_ANSWER_CHARS = 400


def _start(ls: Connection, args: RunArgs, mode: RunMode) -> RunHandle:
    from agentls.lsp.prompt_commands import expand_command

    expanded, command = expand_command(ls, args.prompt)  # `/name args`: a custom command
    prompt = prompt_with_context(ls, args.model_copy(update={"prompt": expanded}))
    return ls.host.start_run(prompt, args.session, mode, title=args.prompt, command=command)


async def run(ls: Connection, args: RunArgs) -> StartedPayload | RunPayload:
    handle = _start(ls, args, args.mode or ls.config.current.mode)
    if not args.wait:
        return {"session": handle.session_id}
    assert handle.task is not None
    return await asyncio.shield(handle.task)


async def ask(ls: Connection, args: RunArgs) -> StartedPayload | RunPayload:
    """A read-only run whose answer is shown to the user."""
    handle = _start(ls, args, "plan")
    assert handle.task is not None
    shown = asyncio.get_running_loop().create_task(_show_answer(ls, handle.task))
    if not args.wait:
        return {"session": handle.session_id}
    return await asyncio.shield(shown)


async def _show_answer(ls: Connection, task: asyncio.Task[RunPayload]) -> RunPayload:
    result = await task
    text = result["text"].strip()
    if result.get("status") != "completed" or not text:
        return result
    if len(text) <= SHORT_ANSWER_CHARS and text.count("\n") <= 3:
        ls.message(types.MessageType.Info, text)
        return result
    if ls.features.show_document:
        path = _answer_file(str(result["session"]), text)
        try:
            await ls.window_show_document_async(
                types.ShowDocumentParams(uri=path.as_uri(), take_focus=True)
            )
            result["answer"] = path.as_uri()
            return result
        except Exception as exc:
            log.info("showDocument failed (%s); showing a message instead", exc)
    ls.message(types.MessageType.Info, text)
    return result


def _answer_file(session_id: str, text: str) -> Path:
    """The answer as a Markdown file the editor opens (private: 0600 in a 0700 folder)."""
    from agentls.privatefiles import user_temp_dir, write_private

    return write_private(user_temp_dir("answers") / f"{session_id}.md", text + "\n")


def prompt_with_context(ls: Connection, args: RunArgs) -> str:
    """The prompt, preceded by the current file and selection when the editor sent them."""
    if args.uri is None:
        if args.range is not None:
            raise ValueError("`range` needs `uri` (the document the selection is in)")
        return args.prompt
    path = uri_to_path(args.uri)
    shown = _relative(ls, path) if path else args.uri
    if args.range is None:
        return f"{EDITOR_CONTEXT}{shown}`.\n\n{args.prompt}"
    doc = ls.workspace.get_text_document(args.uri)
    try:
        rng = types.Range(
            types.Position(args.range.start.line, args.range.start.character),
            types.Position(args.range.end.line, args.range.end.character),
        )
        selection = doc.text_in_client_range(rng)
    except OSError as exc:
        raise ValueError(f"cannot read {args.uri}: {exc.strerror or exc}") from None
    first, last = args.range.start.line + 1, args.range.end.line + 1
    lines = f"line {first}" if first == last else f"lines {first}-{last}"
    return (
        f"{EDITOR_CONTEXT}{shown}`; they selected {lines}:\n```\n{selection}\n```\n\n{args.prompt}"
    )


def _relative(ls: Connection, path: Path) -> str:
    for root in ls.agent_workspace.roots:
        try:
            return path.resolve().relative_to(root).as_posix()
        except ValueError:
            continue
    return str(path)


async def cancel(ls: Connection, args: CancelArgs) -> CancelPayload:
    return {"cancelled": ls.host.cancel(args.session)}


async def accept(ls: Connection, args: EditArgs) -> AcceptPayload:
    from agentls.lsp.delivery import accept_staged
    from agentls.lsp.hunk_review import accept_hunks, note_files

    if args.hunks is not None:
        _hunks_alone(args)
        return await accept_hunks(ls, args.session, args.hunks, args.reason)
    result = await accept_staged(ls, args.session, args.uris)
    note_files(ls, args.session, "accepted", result["files"], args.reason)
    return result


async def reject(ls: Connection, args: EditArgs) -> RejectPayload:
    from agentls.lsp.delivery import reject_staged
    from agentls.lsp.hunk_review import note_files, reject_hunks

    if args.hunks is not None:
        _hunks_alone(args)
        return reject_hunks(ls, args.session, args.hunks, args.reason)
    result = reject_staged(ls, args.session, args.uris)
    note_files(ls, args.session, "rejected", result["files"], args.reason)
    return result


def _hunks_alone(args: EditArgs) -> None:
    if args.uris is not None:
        raise ValueError("give either `hunks` or `uris`, not both")


async def tool(ls: Connection, args: ToolArgs) -> ToolCallPayload:
    result = await ls.host.run_tool(args.name, args.input, args.mode)
    return {"content": result.content, "is_error": result.is_error}


async def tools(ls: Connection, args: ToolsArgs) -> ToolsPayload:
    if args.session is None:
        await ls.host.load_tool_sources()  # a new session's MCP tools, as it would see them
    return ls.host.tool_definitions(args.session, args.mode, deferred=args.deferred)


async def status(ls: Connection, args: StatusArgs) -> StatusPayload:
    from agentls.lsp.symbols import index_state

    result: StatusPayload = {
        **ls.host.status(),
        "mode": ls.config.current.mode,
        "settings": ls.config.current.model_dump(by_alias=True, mode="json"),
        "permission_mode": ls.safety.mode if ls.safety is not None else None,
        "index": index_state(ls),
    }
    trust = trust_of(ls)
    if trust is not None:
        result["trust"] = trust.payload()
    return result


async def trust(ls: Connection, args: TrustArgs) -> dict[str, object]:
    """Trust the workspace (or not) for its current settings: the answer the trust prompt
    would give, for clients that cannot show one (Helix) and for scripts."""
    from agentls.lsp.trust import decide, refresh_trust

    refresh_trust(ls)
    current = trust_of(ls)
    if current is None:
        raise ValueError("the workspace is not set up yet")
    return decide(ls, current, args.trusted).payload()


async def compact(ls: Connection, args: CompactArgs) -> CompactionPayload:
    """Summarise a session's older turns now; the session keeps working afterwards."""
    from agentls.agent.run.compaction import CompactionError

    try:
        return await ls.host.compact(args.session)
    except CompactionError as exc:
        raise ValueError(str(exc)) from None


async def sessions(ls: Connection, args: StatusArgs) -> SessionsPayload:
    """Saved sessions of this workspace, newest first (resumable with `agentls.run`)."""
    root = ls.host.workspace.roots[0]
    return {"sessions": ls.host.store.list(root)}


async def staged(ls: Connection, args: StagedArgs) -> StagedPayload:
    """A session's staged files with the texts a diff view needs."""
    from agentls.lsp.review import staged_files

    return staged_files(ls, args.session, args.uris)


async def commands(ls: Connection, args: StatusArgs) -> CommandsPayload:
    """The custom commands a prompt can start with (`/name args`), for editors' pickers."""
    from agentls.lsp.prompt_commands import list_commands

    return list_commands(ls)


async def tool_result(ls: Connection, args: ToolResultArgs) -> ToolResultPayload:
    """One tool call's output (`agentls/event` carries only its summary and status)."""
    from agentls.lsp.review import tool_result as find

    return find(ls, args.session, args.tool_use_id)
