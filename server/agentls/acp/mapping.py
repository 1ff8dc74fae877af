"""Pure conversions between ACP's types and the core's: no I/O, no state.

- a `session/prompt`'s content blocks → the run's prompt text and its attachments;
- a tool call → ACP's tool kind, title and locations;
- a run's status → ACP's stop reason;
- ACP's MCP server entries → our server specs;
- the core's `todos` event → an ACP plan;
- our permission modes → ACP session modes.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import unquote, urlparse

from acp import RequestError
from acp.schema import (
    AudioContentBlock,
    BlobResourceContents,
    EmbeddedResourceContentBlock,
    HttpMcpServer,
    ImageContentBlock,
    McpServerStdio,
    PlanEntry,
    ResourceContentBlock,
    SessionMode,
    SessionModeState,
    SseMcpServer,
    StopReason,
    TextContentBlock,
    TextResourceContents,
    ToolCallLocation,
    ToolKind,
)

from agentls.agent.permissions.guards import call_subject
from agentls.agent.protocol.messages import ContentBlockParam, text_block
from agentls.agent.rules.rule import COMMAND_TOOLS, EDIT_TOOLS
from agentls.config.base import PermissionMode

if TYPE_CHECKING:
    from anthropic.types import ImageBlockParam

    from agentls.mcp.config import ServerSpec

PromptBlock = (
    TextContentBlock
    | ImageContentBlock
    | AudioContentBlock
    | ResourceContentBlock
    | EmbeddedResourceContentBlock
)
McpEntry = Any
"""One of ACP's MCP server entries (stdio, http, sse; the SDK's classes)."""

MediaType = Literal["image/jpeg", "image/png", "image/gif", "image/webp"]
_IMAGE_TYPES: dict[str, MediaType] = {
    "image/jpeg": "image/jpeg",
    "image/png": "image/png",
    "image/gif": "image/gif",
    "image/webp": "image/webp",
}
"""What the Messages API takes as an image block."""

CONTEXT_OPEN = "<context"
"""Prompt context blocks start with this (`<context source="URI">`): a replayed session
shows them as the resources the user attached, not as text."""


# --- prompts --------------------------------------------------------------------------


class PromptInput:
    """What a `session/prompt` becomes: the text the user typed, and what goes with it."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.attachments: list[ContentBlockParam] = []
        self.links: list[str] = []

    @property
    def request(self) -> str:
        """The user's own words (the run's title; slash commands are read from it)."""
        return "\n".join(t for t in self.texts if t.strip()).strip()

    @property
    def prompt(self) -> str:
        """The prompt text: the user's words, then the files they linked (by path: the
        agent reads them with its tools, so the secret-file rules apply)."""
        parts = [self.request]
        if self.links:
            parts.append(
                "The user referred to these files (read them with read_file as needed):\n"
                + "\n".join(f"- {link}" for link in self.links)
            )
        return "\n\n".join(p for p in parts if p)


def prompt_input(blocks: Sequence[PromptBlock]) -> PromptInput:
    """Text, links, embedded resources and images → one run's input.

    Raises `RequestError` (invalid params) for content this agent did not advertise: audio,
    an image type the model cannot take, or an empty prompt."""
    found = PromptInput()
    for block in blocks:
        if isinstance(block, TextContentBlock):
            found.texts.append(block.text)
        elif isinstance(block, ImageContentBlock):
            found.attachments.append(_image(block.data, block.mime_type, block.uri))
        elif isinstance(block, ResourceContentBlock):
            found.links.append(_link_text(block.uri, block.title or block.name))
        elif isinstance(block, EmbeddedResourceContentBlock):
            found.attachments.append(_embedded(block.resource))
        else:
            raise _invalid("audio prompts are not supported (the agent advertises no audio)")
    if not found.request and not found.attachments and not found.links:
        raise _invalid("the prompt is empty: send at least one text block")
    return found


def _image(data: str, mime_type: str | None, uri: str | None) -> ContentBlockParam:
    media = _IMAGE_TYPES.get(mime_type or "")
    if media is None:
        where = f" ({uri})" if uri else ""
        raise _invalid(
            f"image type {mime_type!r}{where} is not supported; use one of "
            + ", ".join(_IMAGE_TYPES)
        )
    block: ImageBlockParam = {
        "type": "image",
        "source": {"type": "base64", "media_type": media, "data": data},
    }
    return block


def _embedded(resource: TextResourceContents | BlobResourceContents) -> ContentBlockParam:
    if isinstance(resource, TextResourceContents):
        return text_block(context_block(resource.uri, resource.text))
    if resource.mime_type in _IMAGE_TYPES:
        return _image(resource.blob, resource.mime_type, resource.uri)
    kind = resource.mime_type or "binary data"
    return text_block(context_block(resource.uri, f"[{kind}: not shown to the model]"))


def context_block(uri: str, text: str) -> str:
    """An embedded resource as prompt context (`<context source="…">…</context>`)."""
    quoted = uri.replace('"', "%22")
    return f'{CONTEXT_OPEN} source="{quoted}">\n{text}\n</context>'


def context_source(text: str) -> str | None:
    """The URI of a context block made by `context_block`, else None."""
    if not text.startswith(CONTEXT_OPEN + ' source="'):
        return None
    start = len(CONTEXT_OPEN) + len(' source="')
    end = text.find('"', start)
    return text[start:end] if end > start else None


def _link_text(uri: str, name: str) -> str:
    path = uri_path(uri)
    return str(path) if path is not None else f"{name} <{uri}>"


def uri_path(uri: str) -> Path | None:
    """The local path of a `file:` URI (or of an absolute path given as is)."""
    if uri.startswith("/"):
        return Path(uri)
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return Path(unquote(parsed.path))


def _invalid(message: str) -> RequestError:
    return RequestError(-32602, message, {"reason": message})


# --- tool calls -----------------------------------------------------------------------

_KINDS: Mapping[str, ToolKind] = {
    "read_file": "read",
    "document_symbols": "read",
    "hover": "read",
    "diagnostics": "read",
    "go_to_definition": "search",
    "find_implementations": "search",
    "type_definition": "search",
    "call_hierarchy": "search",
    "find_references": "search",
    "grep": "search",
    "list_files": "search",
    "search_symbols": "search",
    "tool_search": "search",
    "web_search": "search",
    "delete_file": "delete",
    "rename_file": "move",
    "web_fetch": "fetch",
    "todo_write": "think",
    "run_tests": "execute",
    "lint": "execute",
}


def tool_kind(name: str, read_only: bool | None) -> ToolKind:
    """ACP's kind of a call (the client's icon): by name, else by what the tool says."""
    if name in COMMAND_TOOLS:
        return "execute"
    if name in _KINDS:
        return _KINDS[name]
    if name in EDIT_TOOLS:
        return "edit"
    if read_only:
        return "read"
    return "other"


def tool_locations(
    name: str, raw_input: Mapping[str, Any], roots: Sequence[Path]
) -> list[ToolCallLocation]:
    """The absolute paths a call names (the editor can follow along), with a line where the
    input says one (read_file's `offset`, a symbol position's `line`)."""
    subject = call_subject(name, dict(raw_input), roots)
    line = _line_of(raw_input)
    found: list[ToolCallLocation] = []
    for path in dict.fromkeys(subject.paths):
        if name in ("grep", "list_files") and os.path.isdir(path):
            continue
        found.append(ToolCallLocation(path=path, line=line))
    return found


def _line_of(raw_input: Mapping[str, Any]) -> int | None:
    for key in ("offset", "line"):
        value = raw_input.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
            return value
    return None


# --- results --------------------------------------------------------------------------

_STOP: Mapping[str, StopReason] = {
    "completed": "end_turn",
    "max_turns": "max_turn_requests",
    "refused": "refusal",
    "cancelled": "cancelled",
}


def stop_reason(status: str, last_stop: str | None) -> StopReason | None:
    """The prompt's stop reason; None for a failed run (answered with an error)."""
    if status == "completed" and last_stop == "max_tokens":
        return "max_tokens"  # the answer was cut at the output limit and could not go on
    return _STOP.get(status)


TodoStatus = Literal["pending", "in_progress", "completed"]
_TODO_STATUS: dict[str, TodoStatus] = {
    "pending": "pending",
    "in_progress": "in_progress",
    "completed": "completed",
}


def plan_entries(todos: object) -> list[PlanEntry]:
    """A `todos` event's list (`[{content, status, active_form}]`) → ACP plan entries."""
    entries: list[PlanEntry] = []
    if not isinstance(todos, Iterable) or isinstance(todos, str | bytes):
        return entries
    for todo in todos:
        content = _field(todo, "content")
        if not isinstance(content, str) or not content.strip():
            continue
        status = _TODO_STATUS.get(str(_field(todo, "status")), "pending")
        entries.append(PlanEntry(content=content, status=status, priority="medium"))
    return entries


def _field(item: object, name: str) -> object:
    if isinstance(item, Mapping):
        return item.get(name)
    return getattr(item, name, None)


# --- MCP servers ----------------------------------------------------------------------


def mcp_specs(entries: Sequence[McpEntry] | None) -> list[ServerSpec]:
    """The client's MCP servers as our specs: ACP's `env` and `headers` lists become maps.

    Values are taken literally (the client already resolved them; no `${VAR}` expansion).
    ACP-transport servers (`type: acp`, unstable) are not supported: a clear error."""
    if not entries:
        return []
    from agentls.mcp.config import RemoteServer, StdioServer  # the MCP SDK: only when used

    specs: list[ServerSpec] = []
    for entry in entries:
        if isinstance(entry, McpServerStdio):
            env = {item.name: item.value for item in entry.env}
            specs.append(StdioServer(entry.name, "config", entry.command, tuple(entry.args), env))
        elif isinstance(entry, HttpMcpServer | SseMcpServer):
            headers = {item.name: item.value for item in entry.headers}
            kind: Literal["http", "sse"] = "sse" if isinstance(entry, SseMcpServer) else "http"
            specs.append(RemoteServer(entry.name, "config", entry.url, kind, headers))
        else:
            name = getattr(entry, "name", "?")
            raise _invalid(f"MCP server {name!r}: only stdio, http and sse servers are supported")
    names = [s.name for s in specs]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise _invalid(f"MCP server names must be unique; repeated: {', '.join(duplicates)}")
    return specs


# --- modes ----------------------------------------------------------------------------

_MODES: Mapping[PermissionMode, tuple[str, str]] = {
    "default": (
        "Default",
        "Asks before commands and before edits are written (or at the end of the run, in "
        "review delivery).",
    ),
    "acceptEdits": (
        "Accept edits",
        "Edits are written without asking; commands still ask.",
    ),
    "plan": (
        "Plan",
        "Read-only: the agent explores and proposes; no write tools are offered.",
    ),
    "dontAsk": (
        "Don't ask",
        "Nothing is asked: what would be asked is denied (the model is told which allow rule "
        "would permit it). For unattended runs.",
    ),
    "bypassPermissions": (
        "Bypass permissions",
        "Everything runs without asking (deny rules and secret files still apply).",
    ),
}


def session_modes(current: PermissionMode, bypass_enabled: bool) -> SessionModeState:
    """Our permission modes as ACP session modes; bypassPermissions only where the user's
    settings allow it (`allowBypassPermissions`)."""
    modes = [
        SessionMode(id=mode, name=name, description=description)
        for mode, (name, description) in _MODES.items()
        if mode != "bypassPermissions" or bypass_enabled
    ]
    return SessionModeState(current_mode_id=current, available_modes=modes)
