"""The per-call execution pipeline: the one path every tool call takes.

lookup → cancelled? → deferred? → schema validation → `validate_input` → pre-hooks →
the permission decision (`agentls.agent.run.decision.decide`: hook deny → secret files → plan
mode → the tool's refusal → the host's policy; one `Requirement`) → the approval when it
needs one → call → redact credentials → truncate → post-hooks → redact credentials.

Secret files, plan mode and credential redaction are steps no host configuration — no
policy, no hooks, a settings file that failed to load — can leave out. Every failure
becomes an `is_error` result with a message the model can act on; nothing here retries a
call. See docs/architecture.md.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Collection
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from pydantic import ValidationError

from agentls.agent.framework.context import ToolContext
from agentls.agent.framework.registry import AnyTool, ToolPool
from agentls.agent.framework.requirement import Requirement
from agentls.agent.framework.tool import (
    ContentBlock,
    InvalidToolInput,
    ToolError,
    ToolOutput,
    output_to_content,
)
from agentls.agent.hooks.runner import HookOutcome, HookRunner, NoHooks
from agentls.agent.permissions.approval import AllowAll, PendingCall, PermissionPolicy
from agentls.agent.permissions.guards import call_subject, redact_output
from agentls.agent.protocol.events import (
    EventSink,
    Notice,
    ToolFinished,
    ToolOutputReady,
    ToolStarted,
    ignore_event,
)
from agentls.agent.protocol.messages import JsonObject, TextBlockParam, ToolResultBlockParam
from agentls.agent.run.decision import decide, hook_requirement
from agentls.config import describe_validation_error as describe_errors
from agentls.workspace.editor_refresh import refresh_from_editor
from agentls.workspace.secrets import Redactor

log = logging.getLogger(__name__)

CANCELLED_MESSAGE = "Cancelled: the user cancelled the run; this call did not complete."
CANCELLED_WHILE_ASKING = (
    "the run was cancelled while the approval prompt was open, so this call was not made"
)


@dataclass(frozen=True)
class ToolCall:
    """One `tool_use` block from the model."""

    id: str
    name: str
    input: JsonObject


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
    """Runs single calls against a pool with the host's permission policy and hooks; every
    call gets one permission decision (`decide`) and credential redaction."""

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
        redactor = Redactor.from_env()
        try:
            output = await self._run_steps(tool, call, ctx.for_call(call.id), redactor)
        except asyncio.CancelledError:
            self._finish(call, ctx, started, is_error=True)
            raise
        # last: whatever a hook or an error message added never carries a credential
        output = redact_output(output, redactor)
        self.events(
            ToolOutputReady(
                ctx.session_id, call.id, call.name, content_text(output.content), output.is_error
            )
        )
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
        self, tool: AnyTool | None, call: ToolCall, ctx: ToolContext, redactor: Redactor
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
        self._tell_user(pre, ctx)
        hook = hook_requirement(pre)
        if pre.updated_input is not None and not _forbidden(hook):
            raw_input = pre.updated_input
            parsed = _parse(tool, raw_input)
            if isinstance(parsed, ToolOutput):
                return parsed
        needed = await self._permission(PendingCall(tool, parsed, ctx, hook))
        if needed.kind != "skip":
            return _error(needed.message(tool.name))
        await _read_from_editor(tool, raw_input, ctx)
        ctx = replace(ctx, recheck=partial(self._recheck, tool, ctx))
        output = await _call(tool, parsed, ctx)
        # before truncating: a cut must not leave half a key behind
        output = redact_output(output, redactor)
        output = truncate(output, tool.max_result_chars)
        return await self._post_hooks(tool, raw_input, output, ctx)

    async def _permission(self, call: PendingCall) -> Requirement:
        """The one permission decision, then the approval when it needs one: skip, or
        forbidden with what the model is told (an unresolved approval is forbidden)."""
        needed = await decide(call, self.permissions)
        if needed.kind == "forbidden":
            return needed
        if call.ctx.cancelled.is_set():  # cancelled while the hooks or the tool were asked
            return Requirement.forbidden(CANCELLED_WHILE_ASKING)
        if needed.kind == "needs_approval":
            needed = await self._approve(call, needed)
        if needed.kind == "needs_approval":  # a policy that could not resolve it: fail closed
            return Requirement.forbidden(needed.reason)
        return needed

    async def _approve(self, call: PendingCall, needed: Requirement) -> Requirement:
        """The policy's approval, abandoned the moment the run is cancelled.

        Why shielded: the policy may be waiting for the user. Cancel must end the run at
        once, not when the prompt is answered — even with an approver that ignores the
        cancellation of its task. The approval is then cancelled (the approver withdraws
        its prompt) and an answer arriving later has no one to run for.
        """
        if call.ctx.cancelled.is_set():
            return Requirement.forbidden(CANCELLED_WHILE_ASKING)
        deciding = asyncio.ensure_future(self.permissions.approve(call, needed))
        try:
            return await asyncio.shield(deciding)
        except asyncio.CancelledError:
            if not deciding.done():
                deciding.cancel()
                deciding.add_done_callback(_ignore_outcome)
            raise

    async def _recheck(self, tool: AnyTool, ctx: ToolContext, raw: JsonObject) -> str | None:
        """Steps 4-7 for a follow-up of a running call with another input (a redirect):
        None when it may go ahead, else the reason it may not."""
        parsed = _parse(tool, raw)
        if isinstance(parsed, ToolOutput):
            return str(parsed.content)
        problem = await tool.validate_input(parsed, ctx)
        if problem:
            return problem
        pre = await self.hooks.pre_tool(tool.name, raw, ctx)
        needed = await self._permission(PendingCall(tool, parsed, ctx, hook_requirement(pre)))
        return None if needed.kind == "skip" else needed.message(tool.name)

    async def _post_hooks(
        self, tool: AnyTool, raw_input: JsonObject, output: ToolOutput, ctx: ToolContext
    ) -> ToolOutput:
        post = await self.hooks.post_tool(tool.name, raw_input, output, ctx)
        self._tell_user(post, ctx)
        if post.block:
            return _error(f"Blocked by hook after the call ran: {post.message}")
        context = [post.additional_context] if post.additional_context else []
        failure = getattr(self.hooks, "post_tool_failure", None)
        if output.is_error and callable(failure):  # Claude Code's PostToolUseFailure
            failed: HookOutcome = await failure(tool.name, raw_input, output, ctx)
            self._tell_user(failed, ctx)
            context += [failed.additional_context] if failed.additional_context else []
        if context and isinstance(output.content, str):
            return ToolOutput("\n\n".join([output.content, *context]), output.is_error)
        return output

    def _tell_user(self, outcome: HookOutcome, ctx: ToolContext) -> None:
        """A hook's `systemMessage` is for the user, not the model: a notice event."""
        if outcome.system_message:
            self.events(Notice(ctx.session_id, outcome.system_message))


async def _read_from_editor(tool: AnyTool, raw_input: JsonObject, ctx: ToolContext) -> None:
    """Editors that answer only when asked (ACP `fs/read_text_file`): the files this call
    names are read through the editor first, so the tool sees unsaved changes. Only now,
    after the permission step: a refused call must not make us read its file."""
    if ctx.services.editor_files is None:
        return
    subject = call_subject(tool.name, raw_input, ctx.workspace.roots)
    await refresh_from_editor(ctx.workspace, ctx.session_id, subject.paths)


def _summary(tool: AnyTool | None, call: ToolCall) -> str:
    if tool is None:
        return f"Calling unknown tool {call.name}"
    try:
        return tool.summary(tool.parse_input(call.input))
    except Exception:
        return f"Calling {tool.name}"


def _error(message: str) -> ToolOutput:
    return ToolOutput(message, is_error=True)


def _forbidden(hook: Requirement | None) -> bool:
    return hook is not None and hook.kind == "forbidden"


def _ignore_outcome(future: asyncio.Future[Any]) -> None:
    """Retrieve an abandoned decision's outcome so asyncio does not log it as lost."""
    if not future.cancelled():
        future.exception()


def _parse(tool: AnyTool, raw: JsonObject) -> Any:
    try:
        return tool.parse_input(raw)
    except ValidationError as exc:
        return _error(describe_validation_error(tool.name, exc))
    except InvalidToolInput as exc:
        return _error(f"InputValidationError: {tool.name} input is invalid: {exc}")


def describe_validation_error(tool_name: str, exc: ValidationError) -> str:
    """Name each bad field and why, the way a person would fix it."""
    return f"InputValidationError: {tool_name} input is invalid: {describe_errors(exc)}"


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


def content_text(content: str | list[ContentBlock]) -> str:
    """A result's text; blocks that are not text (images, documents) are named."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content:
        parts.append(block["text"] if block["type"] == "text" else f"[{block['type']}]")
    return "\n".join(parts)


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
