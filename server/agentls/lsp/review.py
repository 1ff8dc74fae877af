"""What an editor's agent view asks about a session: its staged files and tool outputs.

`agentls.staged` gives, per staged file, the three texts a diff view needs (what the agent
read, what it wants, what the editor has now); `agentls.toolResult` gives one tool call's
output, which `agentls/event` leaves out to keep the stream small (a view fetches it when
the user opens the call).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from agentls.agent.protocol.messages import blocks_of
from agentls.lsp.delivery import doc_state, escape_reason, paths_of, select, uri_of
from agentls.workspace.changes import Change

if TYPE_CHECKING:
    from agentls.agent.protocol.results import StagedFilePayload, StagedPayload, ToolResultPayload
    from agentls.lsp.contract import Connection


def staged_files(ls: Connection, session_id: str, uris: list[str] | None) -> StagedPayload:
    """`{session, files: [{uri, kind, old_uri, original, staged, current}]}`; texts are None
    where the file does not exist (before a create, after a delete)."""
    changes = ls.host.changes_of(session_id)
    entries = select(changes, paths_of(uris))
    from agentls.agent.persistence.staged import hunk_payloads

    checks = ls.host.review_checks(session_id)
    by_path = {c["path"]: c["summary"] for c in checks}
    files = [_describe(ls, change) for change in entries]
    for file, change in zip(files, entries, strict=True):
        if str(change.path) in by_path:
            file["check"] = by_path[str(change.path)]
    result: StagedPayload = {
        "session": session_id,
        "files": files,
        "hunks": hunk_payloads(changes),
    }
    if checks:
        result["checks"] = checks
    return result


def _describe(ls: Connection, change: Change) -> StagedFilePayload:
    source = change.old_path if change.old_path is not None else change.path
    # a path swapped for a symlink out of the workspace is not read (delivery refuses it)
    current = None if escape_reason(ls, source) else doc_state(ls, source).text
    staged: str | None
    if change.kind == "delete":
        staged = None
    elif change.kind == "rename" and change.new_text is None:
        staged = current  # moved unchanged: the content is whatever the old file has now
    else:
        staged = change.new_text
    return {
        "uri": uri_of(ls, change.path),
        "kind": change.kind,
        "old_uri": uri_of(ls, change.old_path) if change.old_path is not None else None,
        "original": change.original_text,
        "staged": staged,
        "current": current,
    }


def tool_result(ls: Connection, session_id: str, tool_use_id: str) -> ToolResultPayload:
    """`{tool_use_id, content, is_error}` of one call: from the session's messages, else
    (after compaction) from its transcript. LookupError when the session never made it."""
    session = ls.host.session(session_id)
    for message in reversed(session.messages):
        if message["role"] != "user":
            continue
        for block in blocks_of(message):
            if block["type"] == "tool_result" and block["tool_use_id"] == tool_use_id:
                return _result(tool_use_id, block.get("content"), block.get("is_error"))
    from agentls.agent.persistence.transcript import subagent_transcripts

    path = session.transcript.path
    for transcript in [path, *subagent_transcripts(path)]:  # a sub-agent's call too
        found = _from_transcript(transcript, tool_use_id)
        if found is not None:
            return found
    raise LookupError(f"session {session_id} has no tool call {tool_use_id!r}")


def _from_transcript(path: Path, tool_use_id: str) -> ToolResultPayload | None:
    from agentls.agent.persistence.transcript import read_records

    try:
        for record in read_records(path):
            if record.get("type") == "tool_result" and record.get("tool_use_id") == tool_use_id:
                return _result(tool_use_id, record.get("content"), record.get("is_error"))
    except OSError:
        return None
    return None


def _result(tool_use_id: str, content: object, is_error: object) -> ToolResultPayload:
    return {"tool_use_id": tool_use_id, "content": _text(content), "is_error": bool(is_error)}


def _text(content: object) -> str:
    """A tool result's text; non-text blocks (images) are named, not sent."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return "" if content is None else str(content)
    parts = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif isinstance(block, dict):
            parts.append(f"[{block.get('type', 'block')}]")
    return "\n".join(parts)
