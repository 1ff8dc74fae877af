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


def _blocks(message: object, block_type: str) -> list[dict[str, object]]:
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


class IssuedThinking:
    """Thinking the server handed out, so it can check clients send it back unchanged.

    The real API signs each thinking block; a client that edits, drops or reorders one gets
    a 400. Here the signature is the key: a thinking block whose signature the server
    never issued, or whose text differs from what was issued with it, is refused, as is a
    final assistant turn with tool calls that lost the thinking block it started with.
    """

    def __init__(self) -> None:
        self.thinking: dict[str, str] = {}
        """signature → thinking text."""
        self.redacted: set[str] = set()
        self.first_block: dict[str, dict[str, object]] = {}
        """tool_use id → the thinking block its turn started with."""

    def issue(self, blocks: list[dict[str, object]]) -> None:
        """Remember the thinking of one played turn (its content blocks as JSON)."""
        for block in blocks:
            if block.get("type") == "thinking":
                self.thinking[str(block["signature"])] = str(block["thinking"])
            elif block.get("type") == "redacted_thinking":
                self.redacted.add(str(block["data"]))
        if blocks and blocks[0].get("type") in ("thinking", "redacted_thinking"):
            for block in blocks:
                if block.get("type") == "tool_use":
                    self.first_block[str(block["id"])] = blocks[0]

    def problem(self, request: RecordedRequest) -> str | None:
        """The API's error for a request that breaks the thinking rules, else None."""
        body = request.json
        thinking = body.get("thinking")
        if thinking is not None:
            problem = _thinking_param(thinking, body)
            if problem:
                return problem
        found = body.get("messages")
        messages: list[Any] = found if isinstance(found, list) else []
        for index, message in enumerate(messages):
            if isinstance(message, dict) and message.get("role") == "assistant":
                problem = self._signed(index, message)
                if problem:
                    return problem
        enabled = isinstance(thinking, dict) and thinking.get("type") == "enabled"
        return self._kept_before_tools(messages) if enabled else None

    def _signed(self, index: int, message: dict[str, object]) -> str | None:
        content = message.get("content")
        for position, block in enumerate(content if isinstance(content, list) else []):
            where = f"messages.{index}.content.{position}"
            if not isinstance(block, dict):
                continue
            if block.get("type") == "thinking":
                issued = self.thinking.get(str(block.get("signature")))
                if issued is None or issued != block.get("thinking"):
                    return f"{where}: Invalid `signature` in `thinking` block"
            elif (
                block.get("type") == "redacted_thinking" and block.get("data") not in self.redacted
            ):
                return f"{where}: Invalid `data` in `redacted_thinking` block"
        return None

    def _kept_before_tools(self, messages: list[Any]) -> str | None:
        assistants = [
            (i, m)
            for i, m in enumerate(messages)
            if isinstance(m, dict) and m.get("role") == "assistant"
        ]
        if not assistants:
            return None
        index, last = assistants[-1]
        uses = _blocks(last, "tool_use")
        if not any(str(u.get("id")) in self.first_block for u in uses):
            return None
        content = last.get("content")
        first = content[0] if isinstance(content, list) and content else {}
        found = first.get("type") if isinstance(first, dict) else type(first).__name__
        if found not in ("thinking", "redacted_thinking"):
            return (
                f"messages.{index}.content.0.type: Expected `thinking` or `redacted_thinking`, "
                f"but found `{found}`. When `thinking` is enabled, a final `assistant` message "
                "must start with a thinking block (preceding the lastmost set of `tool_use` and "
                "`tool_result` blocks)."
            )
        return None


def _thinking_param(thinking: object, body: dict[str, object]) -> str | None:
    if not isinstance(thinking, dict) or thinking.get("type") not in ("enabled", "disabled"):
        return "thinking: must be {'type': 'enabled', 'budget_tokens': N} or {'type': 'disabled'}"
    if thinking["type"] == "disabled":
        return None
    budget = thinking.get("budget_tokens")
    if not isinstance(budget, int) or isinstance(budget, bool) or budget < 1024:
        return "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
    max_tokens = body.get("max_tokens")
    if isinstance(max_tokens, int) and budget >= max_tokens:
        return "`max_tokens` must be greater than `thinking.budget_tokens`"
    temperature = body.get("temperature")
    if temperature is not None and temperature != 1:
        return "`temperature` may only be set to 1 when thinking is enabled"
    return None
