"""The conversation, typed with the anthropic SDK's param types, and the helpers that read it.

The history is a `list[MessageParam]` whose content blocks are the SDK's `*BlockParam`
TypedDicts: exactly what the Messages API accepts, so a request is the history as it is.
The SDK types a message's `content` as `str | Iterable[...]` (it accepts generators); the
history always holds lists, and the helpers here never assume more than the SDK promises.
A history read back from JSON (a state file, the transcript) is checked by
`parse_history` before it is trusted.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, TypeAlias, cast

if TYPE_CHECKING:
    from anthropic.types import (
        CacheControlEphemeralParam,
        ContentBlockParam,
        MessageParam,
        TextBlockParam,
        ToolParam,
        ToolResultBlockParam,
        ToolUnionParam,
        ToolUseBlockParam,
    )
    from anthropic.types.tool_result_block_param import Content as ToolResultContent
else:
    # Importing the SDK takes seconds (it loads the whole client), and the host must start
    # fast; at run time these names only appear in annotations and aliases, so plain
    # `dict` stands in for them. mypy sees the SDK's TypedDicts.
    CacheControlEphemeralParam = ContentBlockParam = MessageParam = TextBlockParam = dict
    ToolParam = ToolResultBlockParam = ToolUnionParam = ToolUseBlockParam = dict
    ToolResultContent = dict

PINNED_TAG = "agentls-pinned"
"""Marks a system reminder that compaction keeps (instructions, staged edits, todos)."""

__all__ = [
    "CACHE_CONTROL",
    "PINNED_TAG",
    "ContentBlockParam",
    "History",
    "JsonObject",
    "MessageParam",
    "TextBlockParam",
    "ToolParam",
    "ToolResultBlockParam",
    "ToolResultContent",
    "ToolUnionParam",
    "ToolUseBlockParam",
    "add_user_blocks",
    "assistant_message",
    "blocks_of",
    "cache_control",
    "parse_history",
    "text_block",
    "texts_of",
    "tool_uses_of",
    "user_message",
    "with_cache_breakpoint",
]

History: TypeAlias = list[MessageParam]
"""The conversation as sent (before stubbing and cache breakpoints)."""

JsonObject: TypeAlias = dict[str, object]
"""A JSON object of unknown shape: a tool's input (the SDK's own type for it)."""

SystemBlocks: TypeAlias = list[TextBlockParam]


def cache_control() -> CacheControlEphemeralParam:
    """A fresh prompt-cache breakpoint (5-minute TTL)."""
    return {"type": "ephemeral"}


CACHE_CONTROL: CacheControlEphemeralParam = cache_control()
"""Read-only template; use `cache_control()` for a block you will send."""


def text_block(text: str) -> TextBlockParam:
    return {"type": "text", "text": text}


def user_message(blocks: Iterable[ContentBlockParam]) -> MessageParam:
    return {"role": "user", "content": list(blocks)}


def assistant_message(blocks: Iterable[ContentBlockParam]) -> MessageParam:
    return {"role": "assistant", "content": list(blocks)}


def blocks_of(message: MessageParam) -> list[ContentBlockParam]:
    """A message's content as a list of block params (a plain string becomes one text block;
    SDK response objects, which the history never holds, are skipped)."""
    content = message["content"]
    if isinstance(content, str):
        return [text_block(content)]
    return [block for block in content if isinstance(block, dict)]


def texts_of(blocks: Iterable[ContentBlockParam]) -> list[str]:
    return [block["text"] for block in blocks if block["type"] == "text"]


def tool_uses_of(blocks: Iterable[ContentBlockParam]) -> list[ToolUseBlockParam]:
    return [block for block in blocks if block["type"] == "tool_use"]


def add_user_blocks(history: History, blocks: Sequence[ContentBlockParam]) -> None:
    """Append user content, merging into a trailing user message (roles must alternate)."""
    if history and history[-1]["role"] == "user":
        history[-1] = user_message([*blocks_of(history[-1]), *blocks])
    else:
        history.append(user_message(blocks))


def with_cache_breakpoint(messages: History) -> History:
    """A copy whose last block carries `cache_control` (the history itself stays clean)."""
    if not messages:
        return []
    blocks = copy.deepcopy(blocks_of(messages[-1]))
    if not blocks:
        return list(messages)
    final = cast(dict[str, object], blocks[-1])  # a deep copy: ours to change
    final["cache_control"] = cache_control()
    role = messages[-1]["role"]
    last = user_message(blocks) if role == "user" else assistant_message(blocks)
    return [*messages[:-1], last]


def parse_history(data: object) -> History:
    """A history read from JSON, checked for the shape the API needs; `ValueError` if not.

    Messages need a `user`/`assistant` role and string or list content; each block needs a
    string `type`. Block fields are not re-validated: the API does that, and the history
    was written by agentls in the first place.
    """
    if not isinstance(data, list):
        raise ValueError("`messages` must be a list of user/assistant messages")
    history: History = []
    for index, message in enumerate(data):
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            raise ValueError(f"messages.{index}: needs a role of 'user' or 'assistant'")
        content = message.get("content")
        if isinstance(content, list):
            if not all(isinstance(b, dict) and isinstance(b.get("type"), str) for b in content):
                raise ValueError(f"messages.{index}.content: each block needs a string `type`")
        elif not isinstance(content, str):
            raise ValueError(f"messages.{index}.content: must be a string or a list of blocks")
        history.append(cast("MessageParam", {"role": message["role"], "content": content}))
    return history
