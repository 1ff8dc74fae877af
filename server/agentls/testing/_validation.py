"""The few request checks the real API enforces that agent loops most often get wrong.

A fake that accepted anything would let a client bug (a missing `tool_result`, a dropped
`max_tokens`) pass every test and fail only against the real service.
"""

from __future__ import annotations

from typing import Any

from agentls.testing.recorded import RecordedRequest


def validate_request(request: RecordedRequest, *, needs_max_tokens: bool) -> str | None:
    """Returns the API's `invalid_request_error` message for a bad request, else `None`."""
    body = request.json
    if not body:
        return "request body must be a JSON object"
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "model: Field required"
    if needs_max_tokens and not _is_positive_int(body.get("max_tokens")):
        return "max_tokens: Field required (a positive integer)"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages: at least one message is required"
    return _check_messages(messages)


def _is_positive_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _check_messages(messages: list[Any]) -> str | None:
    for index, message in enumerate(messages):
        problem = _check_shape(index, message) or _check_tool_pairing(messages, index)
        if problem:
            return problem
    return None


def _check_shape(index: int, message: object) -> str | None:
    if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
        return f"messages.{index}: each message needs a role of 'user' or 'assistant'"
    if not isinstance(message.get("content"), str | list):
        return f"messages.{index}.content: must be a string or a list of content blocks"
    return None


def _blocks(message: object, block_type: str) -> list[dict[str, Any]]:
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, dict) and b.get("type") == block_type]


def _check_tool_pairing(messages: list[Any], index: int) -> str | None:
    """Every tool_use needs its tool_result in the next message, and vice versa."""
    if messages[index].get("role") == "assistant" and index + 1 < len(messages):
        used = [str(block.get("id")) for block in _blocks(messages[index], "tool_use")]
        answered = {str(b.get("tool_use_id")) for b in _blocks(messages[index + 1], "tool_result")}
        missing = [tool_id for tool_id in used if tool_id not in answered]
        if missing:
            return (
                f"messages.{index}: `tool_use` ids were found without `tool_result` blocks "
                f"immediately after: {', '.join(missing)}. Each `tool_use` block must have a "
                "corresponding `tool_result` block in the next message."
            )
    if messages[index].get("role") == "user":
        return _check_results_have_uses(messages, index)
    return None


def _check_results_have_uses(messages: list[Any], index: int) -> str | None:
    previous = messages[index - 1] if index > 0 else None
    known = {str(block.get("id")) for block in _blocks(previous, "tool_use")}
    for result in _blocks(messages[index], "tool_result"):
        if str(result.get("tool_use_id")) not in known:
            return (
                f"messages.{index}: unexpected `tool_use_id` found in `tool_result` blocks: "
                f"{result.get('tool_use_id')}. Each `tool_result` block must have a corresponding "
                "`tool_use` block in the previous message."
            )
    return None
