"""`session/load`: a saved session's history replayed as `session/update` notifications.

The client rebuilds its view from them: the user's messages (`user_message_chunk`; context
the prompt carried shows as the resource it came from, and the agent's own reminders are
left out), the answers (`agent_message_chunk`, thinking as `agent_thought_chunk`), and each
tool call (`tool_call`, then `tool_call_update` with its status and output).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    UserMessageChunk,
)

from agentls.acp.approvals import text_content
from agentls.acp.mapping import context_source, tool_kind, tool_locations, uri_path
from agentls.agent.framework.registry import AnyTool
from agentls.agent.protocol.messages import History
from agentls.agent.run.pipeline import content_text

REMINDER = "<system-reminder"
"""Notes the agent added for the model (instructions, restarts): not the user's words."""

ToolLookup = Callable[[str], AnyTool | None]


def replay(history: History, roots: list[Path], find: ToolLookup) -> Iterator[object]:
    """The updates that show `history`, in order."""
    for message in history:
        content = message["content"]
        blocks: list[Any] = (
            [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
        )
        if message["role"] == "user":
            yield from _user(blocks)
        else:
            yield from _assistant(blocks, roots, find)


def _user(blocks: list[Any]) -> Iterator[object]:
    for block in blocks:
        kind = block.get("type")
        if kind == "text":
            text = str(block.get("text", ""))
            if not text.strip() or text.startswith(REMINDER):
                continue
            uri = context_source(text)
            if uri is not None:
                yield _user_chunk(_link(uri))
            else:
                yield _user_chunk(TextContentBlock(type="text", text=text))
        elif kind == "image":
            source = block.get("source") or {}
            if source.get("type") == "base64":
                yield _user_chunk(
                    ImageContentBlock(
                        type="image",
                        data=source.get("data", ""),
                        mime_type=source.get("media_type", ""),
                    )
                )
        elif kind == "tool_result":
            failed = bool(block.get("is_error"))
            text = content_text(block.get("content") or "")
            yield ToolCallProgress(
                session_update="tool_call_update",
                tool_call_id=str(block.get("tool_use_id")),
                status="failed" if failed else "completed",
                content=[text_content(text)] if text else None,
            )


def _assistant(blocks: list[Any], roots: list[Path], find: ToolLookup) -> Iterator[object]:
    for block in blocks:
        kind = block.get("type")
        if kind == "text" and block.get("text"):
            yield AgentMessageChunk(
                session_update="agent_message_chunk",
                content=TextContentBlock(type="text", text=str(block["text"])),
            )
        elif kind == "thinking" and block.get("thinking"):
            yield AgentThoughtChunk(
                session_update="agent_thought_chunk",
                content=TextContentBlock(type="text", text=str(block["thinking"])),
            )
        elif kind == "tool_use":
            yield _tool_call(block, roots, find)


def _tool_call(block: dict[str, object], roots: list[Path], find: ToolLookup) -> ToolCallStart:
    name = str(block.get("name", ""))
    raw = block.get("input")
    raw_input: dict[str, object] = raw if isinstance(raw, dict) else {}
    tool = find(name)
    title, read_only = f"{name} {json.dumps(raw_input)[:80]}", None
    if tool is not None:
        try:
            parsed = tool.parse_input(raw_input)
            title, read_only = tool.summary(parsed), bool(tool.is_read_only(parsed))
        except Exception:
            pass
    return ToolCallStart(
        session_update="tool_call",
        tool_call_id=str(block.get("id")),
        title=title,
        kind=tool_kind(name, read_only),
        status="in_progress",
        locations=tool_locations(name, raw_input, roots) or None,
        raw_input=raw_input,
    )


def _user_chunk(content: Any) -> UserMessageChunk:
    return UserMessageChunk(session_update="user_message_chunk", content=content)


def _link(uri: str) -> ResourceContentBlock:
    path = uri_path(uri)
    name = path.name if path is not None else uri
    return ResourceContentBlock(type="resource_link", uri=uri, name=name or uri)
