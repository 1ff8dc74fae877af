"""The per-call execution pipeline, in the seed's order.

lookup → cancelled? → schema validation → `validate_input` → pre-hooks → permission →
call → format and truncate → post-hooks. Every failure becomes an `is_error` result with a
message the model can act on; nothing here retries a call.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from agentls.agent.context import ToolContext
from agentls.agent.events import EventSink, ToolFinished, ToolStarted, ignore_event
from agentls.agent.hooks import HookRunner, NoHooks
from agentls.agent.messages import TextBlockParam, ToolResultBlockParam
from agentls.agent.permissions import AllowAll, PermissionPolicy
from agentls.agent.registry import AnyTool, ToolPool
from agentls.agent.tool import (
    ContentBlock,
    InvalidToolInput,
    ToolError,
    ToolOutput,
    output_to_content,
)

log = logging.getLogger(__name__)

CANCELLED_MESSAGE = "Cancelled: the user cancelled the run; this call did not complete."


@dataclass(frozen=True)
class ToolCall:
    """One `tool_use` block from the model."""

    id: str
    name: str
    input: dict[str, Any]


@dataclass(frozen=True)
class ToolCallResult:
    """Exactly one per `ToolCall`; becomes a `tool_result` block."""

    tool_use_id: str
    content: str | list[ContentBlock]
    is_error: bool = False
    duration_ms: float = 0.0

    def to_block(self) -> ToolResultBlockParam:
        return {
            "type": "tool_result",
            "tool_use_id": self.tool_use_id,
            "content": self.content,
            "is_error": self.is_error,
        }


def cancelled_result(call: ToolCall) -> ToolCallResult:
    return ToolCallResult(call.id, CANCELLED_MESSAGE, is_error=True)


@dataclass
class Pipeline:
    """Runs single calls against a pool with the host's permission policy and hooks."""

    pool: ToolPool
    permissions: PermissionPolicy = field(default_factory=AllowAll)
    hooks: HookRunner = field(default_factory=NoHooks)
    events: EventSink = ignore_event
    discovered: Collection[str] = ()
    """Extra deferred tools to accept; the pool's own discovered set (derived from the
    history before each request) is what the loop relies on."""

    def parse(self, call: ToolCall) -> tuple[AnyTool, Any] | None:
        """Tool and parsed input, or None when either fails (used for scheduling only)."""
        tool = self.pool.find(call.name)
        if tool is None:
            return None
        try:
            return tool, tool.parse_input(call.input)
        except (ValidationError, InvalidToolInput):
            return None

    async def execute(self, call: ToolCall, ctx: ToolContext) -> ToolCallResult:
        started = time.monotonic()
        tool = self.pool.find(call.name)
        summary = _summary(tool, call)
        self.events(
            ToolStarted(ctx.session_id, call.id, call.name, summary, call.input, time.time())
        )
        try:
            output = await self._run_steps(tool, call, ctx.for_call(call.id))
        except asyncio.CancelledError:
            self._finish(call, ctx, started, is_error=True)
            raise
        duration = self._finish(call, ctx, started, is_error=output.is_error)
        return ToolCallResult(call.id, output.content, output.is_error, duration)

    def _finish(self, call: ToolCall, ctx: ToolContext, started: float, *, is_error: bool) -> float:
        now = time.monotonic()
        duration_ms = (now - started) * 1000
        wall_end = time.time()
        self.events(
            ToolFinished(
                ctx.session_id,
                call.id,
                call.name,
                is_error,
                duration_ms,
                wall_end - duration_ms / 1000,
                wall_end,
            )
        )
        return duration_ms

    async def _run_steps(
        self, tool: AnyTool | None, call: ToolCall, ctx: ToolContext
    ) -> ToolOutput:
        if tool is None:
            return _error(
                f"Error: No such tool available: {call.name}. "
                f"Available tools: {', '.join(self.pool.names) or '(none)'}."
            )
        if ctx.cancelled.is_set():
            return _error(CANCELLED_MESSAGE)
        if self.pool.needs_discovery(tool.name) and tool.name not in self.discovered:
            return _error(
                f"Error: the tool {tool.name} is deferred and its schema has not been loaded. "
                f'Call tool_search with query "select:{tool.name}" first, then call it again.'
            )
        raw_input = call.input
        parsed = _parse(tool, raw_input)
        if isinstance(parsed, ToolOutput):
            return parsed
        problem = await tool.validate_input(parsed, ctx)
        if problem:
            return _error(problem)
        pre = await self.hooks.pre_tool(tool.name, raw_input, ctx)
        if pre.block:
            return _error(f"Blocked by hook: {pre.message or 'a pre-tool hook refused this call'}")
        if pre.updated_input is not None:
            raw_input = pre.updated_input
            parsed = _parse(tool, raw_input)
            if isinstance(parsed, ToolOutput):
                return parsed
        denial = await self._permission(tool, parsed, ctx)
        if denial is not None:
            return denial
        output = await _call(tool, parsed, ctx)
        output = truncate(output, tool.max_result_chars)
        return await self._post_hooks(tool, raw_input, output, ctx)

    async def _permission(self, tool: AnyTool, parsed: Any, ctx: ToolContext) -> ToolOutput | None:
        if ctx.mode == "plan" and not tool.is_read_only(parsed):
            return _error(
                f"Permission denied: {tool.name} changes files, and this run is in plan mode "
                "(read-only). Do not retry; describe the change instead."
            )
        opinion = await tool.check_permissions(parsed, ctx)
        decision = await self.permissions.decide(tool, parsed, opinion, ctx)
        if decision.behavior == "allow":
            return None
        reason = decision.message or "the user's permission settings do not allow this call"
        return _error(
            f"Permission denied for {tool.name}: {reason}. Do not retry the same call; "
            "choose another approach or ask the user."
        )

    async def _post_hooks(
        self, tool: AnyTool, raw_input: dict[str, Any], output: ToolOutput, ctx: ToolContext
    ) -> ToolOutput:
        post = await self.hooks.post_tool(tool.name, raw_input, output, ctx)
        if post.block:
            return _error(f"Blocked by hook after the call ran: {post.message}")
        if post.additional_context and isinstance(output.content, str):
            return ToolOutput(f"{output.content}\n\n{post.additional_context}", output.is_error)
        return output


def _summary(tool: AnyTool | None, call: ToolCall) -> str:
    if tool is None:
        return f"Calling unknown tool {call.name}"
    try:
        return tool.summary(tool.parse_input(call.input))
    except Exception:
        return f"Calling {tool.name}"


def _error(message: str) -> ToolOutput:
    return ToolOutput(message, is_error=True)


def _parse(tool: AnyTool, raw: dict[str, Any]) -> Any:
    try:
        return tool.parse_input(raw)
    except ValidationError as exc:
        return _error(describe_validation_error(tool.name, exc))
    except InvalidToolInput as exc:
        return _error(f"InputValidationError: {tool.name} input is invalid: {exc}")


def describe_validation_error(tool_name: str, exc: ValidationError) -> str:
    """Name each bad field and why, the way a person would fix it."""
    problems = []
    for err in exc.errors(include_url=False):
        where = ".".join(str(p) for p in err["loc"]) or "(input)"
        problems.append(f"`{where}`: {err['msg']}")
    return f"InputValidationError: {tool_name} input is invalid: " + "; ".join(problems)


async def _call(tool: AnyTool, parsed: Any, ctx: ToolContext) -> ToolOutput:
    try:
        return output_to_content(await tool.call(parsed, ctx))
    except ToolError as exc:
        return _error(str(exc) or f"{tool.name} failed")
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        log.exception("tool %s raised", tool.name)
        return _error(f"Error calling tool ({tool.name}): {type(exc).__name__}: {exc}")


def truncate(output: ToolOutput, limit: int) -> ToolOutput:
    """Cut oversized results and say so, so the model knows to narrow its request."""
    if isinstance(output.content, str):
        return ToolOutput(_truncate_text(output.content, limit), output.is_error)
    budget = limit
    blocks: list[ContentBlock] = []
    for block in output.content:
        if block["type"] == "text":
            text = block["text"]
            shortened: TextBlockParam = {**block, "text": _truncate_text(text, max(budget, 0))}
            block = shortened
            budget -= len(text)
        blocks.append(block)
    return ToolOutput(blocks, output.is_error)


def _truncate_text(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return (
        text[:limit]
        + f"\n\n[Output truncated: showing the first {limit} of {len(text)} characters. "
        "Narrow the request (a smaller range, a more specific pattern) to see the rest.]"
    )
