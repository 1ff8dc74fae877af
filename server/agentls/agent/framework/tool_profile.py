"""The compact tool profile (`tools.profile`): fewer tools, one-paragraph descriptions.

Why: the full built-in set is ~11k tokens of tool definitions. A small local model on a CPU
reads every token of the first request before it answers (minutes on two cores), and its
context may be 8k–32k tokens. The compact profile offers the tools such a model can use
well, each described by its first paragraph with one-sentence field descriptions, so tools
and the system prompt stay under 3k tokens.
"""

from __future__ import annotations

import re
from typing import Literal

from agentls.agent.protocol.messages import JsonObject, ToolParam

COMPACT_TOOLS: frozenset[str] = frozenset(
    {"read_file", "list_files", "grep", "edit_file", "write_file", "run_tests", "lint"}
)
"""The compact profile's default set: find, read, change, check."""

MAX_FIELD_CHARS = 90


def pick_profile(
    profile: Literal["auto", "full", "compact"], context_window: int, compact_below: int
) -> Literal["full", "compact"]:
    """`auto` is compact for small context windows (local models), full otherwise."""
    if profile != "auto":
        return profile
    return "compact" if context_window <= compact_below else "full"


def compact_definition(name: str, usage: str, schema: JsonObject) -> ToolParam:
    """A tool's API entry with its first paragraph and short field descriptions; the
    example line, when the usage has one, is kept (it shows the argument shape)."""
    return {
        "name": name,
        "description": _short_usage(usage),
        "input_schema": _short_fields(schema),
    }


def _short_usage(usage: str) -> str:
    text = usage.strip()
    first = re.split(r"\n\s*\n", text, maxsplit=1)[0]
    first = " ".join(first.split())
    at = text.find("Example:")
    example = " ".join(re.split(r"\n\s*\n", text[at:], maxsplit=1)[0].split()) if at >= 0 else ""
    return f"{first}\n{example}" if example and example not in first else first


def _short_fields(schema: JsonObject) -> JsonObject:
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return schema
    short: JsonObject = {}
    for key, field in properties.items():
        if isinstance(field, dict) and isinstance(field.get("description"), str):
            field = {**field, "description": _first_sentence(field["description"])}
        short[key] = field
    return {**schema, "properties": short}


def _first_sentence(text: str) -> str:
    sentence = re.split(r"(?<=[.;])\s", text.strip(), maxsplit=1)[0]
    if len(sentence) > MAX_FIELD_CHARS:
        sentence = sentence[: MAX_FIELD_CHARS - 1].rstrip() + "…"
    return sentence
