"""Tool calls a model wrote as text, turned into `tool_use` blocks.

Why: small local models (Qwen2.5-Coder under llama.cpp, many Ollama models) often write a
call as text instead of the endpoint's structured `tool_use` — a fenced ```` ```json ````
block `{"name": …, "arguments": …}`, a `<tool_call>…</tool_call>` tag (Qwen/Hermes), a bare
JSON object, a `{"function": {"name", "arguments": "<json text>"}}` (OpenAI's shape), or a
list of those. Without recognising them the run prints JSON and stops as if it had finished.

A recognised call becomes a normal `tool_use` block in the history, so it goes through the
same pipeline (schema validation, permissions, hooks) and gets exactly one `tool_result`.
JSON inside `<tool_call>` tags, or exactly of the shape `{"name", "arguments"|"input"}`, may
name an unknown tool (the model clearly meant a call: it gets the pipeline's "no such tool"
error); other fenced or bare JSON counts only when it names an offered tool, so an answer
that merely shows JSON is left alone.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from agentls.agent.protocol.messages import ContentBlockParam, JsonObject
from agentls.agent.run.file_listings import parse_listings

TEXT_CALL_ID_PREFIX = "toolu_text_"

_TAG = re.compile(
    r"<(tool_call|function_call|tools?)>\s*(.*?)\s*(?:</\1>|$)", re.DOTALL | re.IGNORECASE
)
_FENCE = re.compile(r"```[ \t]*([A-Za-z_-]*)[ \t]*\n?(.*?)```", re.DOTALL)
_NAME_KEYS = ("name", "tool", "tool_name", "function", "recipient_name")
_ARG_KEYS = ("arguments", "input", "parameters", "args", "params", "tool_input")


@dataclass(frozen=True)
class TextCall:
    name: str
    input: JsonObject


@dataclass(frozen=True)
class Parsed:
    calls: list[TextCall]
    text: str
    """The text left once the calls are taken out (stripped)."""


_ATTRIBUTE_CALL = re.compile(
    r"<function\s+name\s*=\s*([\"'])(?P<name>[\w.-]+)\1\s+"
    r"(?:arguments|parameters|input)\s*=\s*(?P<q>[\"'])(?P<args>.*?)(?P=q)\s*/?>"
    r"(?:\s*</function>)?",
    re.DOTALL,
)
"""`<function name="edit_file" arguments='{…}'/>`, often inside `<tools>…</tools>`: what
the 1.5B model wrote once the prompt asked it for file listings."""
_EMPTY_WRAPPER = re.compile(r"<(tools?|tool_calls?|function_calls?)>\s*</\1>", re.IGNORECASE)


def _attribute_calls(text: str, calls: list[TextCall]) -> str:
    def replace(match: re.Match[str]) -> str:
        args = _loads(match.group("args"))
        if not isinstance(args, dict):
            return match.group(0)
        calls.append(TextCall(match.group("name"), args))
        return ""

    rest = _ATTRIBUTE_CALL.sub(replace, text)
    return _EMPTY_WRAPPER.sub("", rest) if calls else text


def parse_text_calls(text: str, is_tool: Callable[[str], bool]) -> Parsed:
    """The tool calls written in `text` (attribute-style tags, tags, fences, bare JSON)."""
    calls: list[TextCall] = []
    rest = _attribute_calls(text, calls)
    if calls:
        return Parsed(calls, rest.strip())
    for pattern, trusted in ((_TAG, True), (_FENCE, False)):
        rest = _take(pattern, rest, calls, is_tool, trusted)
    if not calls:
        found = _bare_calls(rest, is_tool)
        if found is not None:
            calls, rest = found
    return Parsed(calls, rest.strip())


def _take(
    pattern: re.Pattern[str],
    text: str,
    calls: list[TextCall],
    is_tool: Callable[[str], bool],
    trusted: bool,
) -> str:
    """Replace each match of `pattern` that holds calls by nothing; collect the calls."""

    def replace(match: re.Match[str]) -> str:
        found = _calls_in(_loads(match.group(2)), is_tool, trusted=trusted)
        if not found:
            return match.group(0)
        calls.extend(found)
        return ""

    return pattern.sub(replace, text)


def _bare_calls(text: str, is_tool: Callable[[str], bool]) -> tuple[list[TextCall], str] | None:
    """JSON objects written straight into the text (the whole reply, or some lines)."""
    whole = _calls_in(_loads(text), is_tool, trusted=False)
    if whole:
        return whole, ""
    calls: list[TextCall] = []
    kept: list[str] = []
    for start, end, value in _json_objects(text):
        found = _calls_in(value, is_tool, trusted=False)
        if found:
            calls.extend(found)
            kept.append(text[start:end])
    if not calls:
        return None
    rest = text
    for piece in kept:
        rest = rest.replace(piece, "", 1)
    return calls, rest


def _json_objects(text: str) -> Iterator[tuple[int, int, object]]:
    """Each top-level JSON object embedded in `text`, with its span."""
    decoder = json.JSONDecoder()
    index = text.find("{")
    while index != -1:
        try:
            value, end = decoder.raw_decode(text, index)
        except ValueError:
            index = text.find("{", index + 1)
            continue
        yield index, end, value
        index = text.find("{", end)


def _loads(text: str) -> object:
    text = text.strip()
    if not text or text[0] not in "[{":
        return None
    try:
        return json.loads(text)
    except ValueError:
        pass
    # several objects, one per line (Qwen writes parallel calls like this)
    values = [value for _, _, value in _json_objects(text)]
    return values or None


def _calls_in(value: object, is_tool: Callable[[str], bool], *, trusted: bool) -> list[TextCall]:
    items = value if isinstance(value, list) else [value]
    calls: list[TextCall] = []
    for item in items:
        call = _call_of(item)
        if call is None or not (trusted or is_tool(call.name) or _call_shaped(item)):
            return []
        calls.append(call)
    return calls


def _call_shaped(item: object) -> bool:
    """Exactly `{"name": …, "arguments": {…}}` (or `input`): a call even when the name is
    wrong (the model then learns from the pipeline that no such tool exists)."""
    if not isinstance(item, dict) or set(item) - {"name", "arguments", "input", "type", "id"}:
        return False
    return isinstance(item.get("name"), str) and (
        isinstance(item.get("arguments"), dict) or isinstance(item.get("input"), dict)
    )


def _call_of(item: object) -> TextCall | None:
    """One call from the shapes models use; None when `item` is not a call."""
    if not isinstance(item, dict):
        return None
    if isinstance(item.get("function"), dict):  # OpenAI's {"type": "function", "function": …}
        item = item["function"]
    assert isinstance(item, dict)
    name = next((item[k] for k in _NAME_KEYS if isinstance(item.get(k), str)), None)
    if not name:
        return None
    arg_keys = [k for k in _ARG_KEYS if k in item]
    if not arg_keys:
        extra = set(item) - {"name", "type", "id"} - set(_NAME_KEYS)
        return TextCall(name, {}) if not extra else None
    args = item[arg_keys[0]]
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except ValueError:
            return None
    if args is None:
        args = {}
    return TextCall(name, dict(args)) if isinstance(args, dict) else None


def with_text_calls(
    content: list[ContentBlockParam],
    is_tool: Callable[[str], bool],
    listing_target: Callable[[str, str], str | None] | None = None,
    bare_listing: Callable[[str], str | None] | None = None,
) -> list[ContentBlockParam] | None:
    """The response's content with text calls as `tool_use` blocks; None when it has none
    (or already has structured calls: those win, as the endpoint meant them).

    `listing_target`: when given, a text block without JSON calls is read for whole-file
    listings (`agentls.agent.run.file_listings`), each one a `write_file` call;
    `bare_listing`: the path of a lone fenced block without one (see `parse_listings`)."""
    if any(block.get("type") == "tool_use" for block in content):
        return None
    changed: list[ContentBlockParam] = []
    calls: list[TextCall] = []
    for block in content:
        if block.get("type") != "text":
            changed.append(block)
            continue
        parsed = parse_text_calls(str(block.get("text", "")), is_tool)
        if not parsed.calls and listing_target is not None:
            parsed = _listings_of(parsed.text, listing_target, bare_listing)
        calls.extend(parsed.calls)
        if parsed.text:
            changed.append({"type": "text", "text": parsed.text})
    if not calls:
        return None
    for call in calls:
        changed.append(
            {
                "type": "tool_use",
                "id": TEXT_CALL_ID_PREFIX + uuid.uuid4().hex[:20],
                "name": call.name,
                "input": call.input,
            }
        )
    return changed


def _listings_of(
    text: str,
    target: Callable[[str, str], str | None],
    bare: Callable[[str], str | None] | None = None,
) -> Parsed:
    listings, rest = parse_listings(text, target, bare)
    calls = [TextCall("write_file", {"path": x.path, "content": x.content}) for x in listings]
    return Parsed(calls, rest if calls else text)


def looks_like_a_call(text: str) -> bool:
    """Whether a reply that was not recognised as a call still looks like an attempt at one
    (so the run fails instead of reporting the JSON as its answer)."""
    stripped = text.strip()
    if re.search(r"<tool_call>|<function_call>|<function\s+name\s*=", stripped, re.IGNORECASE):
        return True
    body = re.sub(r"^```[ \t]*[A-Za-z_-]*[ \t]*\n?", "", stripped).lstrip()
    return bool(re.match(r"^[\[{]\s*\{?\s*\"(name|tool|function)\"\s*:", body))
