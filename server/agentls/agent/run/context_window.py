"""`Compactor`: keeps a conversation's requests inside the model's context window.

Requests are checked against the window before they are sent (a calibrated estimate when
clearly below the threshold, the endpoint's own count near it), and the history is
compacted when it would not fit. What a compaction produces — the pinned instructions, the
staged edits, the summary, the kept turns — is built by the pure functions in
`agentls.agent.run.compaction`; this class runs it against a live conversation.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

from agentls.agent.framework.context import RunMode
from agentls.agent.framework.registry import discovered_tool_names
from agentls.agent.framework.todos import todos_block
from agentls.agent.protocol.messages import TextBlockParam, text_block, texts_of
from agentls.agent.protocol.usage import Usage
from agentls.agent.run import compaction as cx
from agentls.agent.run.conversation import Conversation
from agentls.agent.run.model_client import (
    ModelError,
    ModelRequest,
    ModelResponse,
    count_request_tokens,
    ignore_text,
)
from agentls.errors import SessionBusy

Summarizer = Callable[[ModelRequest], Awaitable[ModelResponse]]
"""Sends the summary request of a compaction (the loop passes one with retries)."""


class Compactor:
    """Context management for one conversation."""

    def __init__(self, conversation: Conversation) -> None:
        self.conversation = conversation

    def observe_input_tokens(self, request: ModelRequest, usage: Usage) -> None:
        """Calibrate the estimator by what the API billed for the request just sent."""
        actual = (
            usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens
        )
        if actual > 0:
            context = self.conversation.context
            context.last_input_tokens = actual
            context.estimator.observe(request.counted_part(), actual)

    async def request_tokens(self, request: ModelRequest, *, exact: bool = True) -> int:
        """Input tokens of a request: the endpoint's count when it has one, else estimated."""
        if exact:
            counted = await count_request_tokens(self.conversation.client, request)
            if counted is not None:
                return counted
        return self.conversation.context.estimator.estimate(request.counted_part())

    async def needs_compaction(self, request: ModelRequest) -> tuple[bool, int]:
        """Whether `request` would exceed the threshold (and its token figure).

        The calibrated estimate decides when the request is clearly below (most turns, no
        extra API call); near or above the limit the endpoint's count decides.
        """
        limit = self.conversation.compaction_limit()
        estimate = self.conversation.context.estimator.estimate(request.counted_part())
        if estimate < limit * 0.75:
            return False, estimate
        tokens = await self.request_tokens(request)
        return tokens > limit, tokens

    async def compact(
        self,
        reason: str = "manual",
        *,
        summarize: Summarizer | None = None,
        mode: RunMode = "review",
        tokens_before: int | None = None,
    ) -> cx.CompactionResult:
        """Summarise older turns, keep the last ones, re-pin instructions and staged edits.

        `CompactionError` when there is nothing to summarise or the summary request failed
        (the history is then unchanged). Manual compaction of a running session raises
        `SessionBusy`; the loop compacts between turns on its own.
        """
        conv = self.conversation
        if conv.context.compacting or (reason == "manual" and conv.running):
            raise SessionBusy(f"session {conv.id} is busy; compact it when the run ends")
        conv.context.compacting = True
        try:
            return await self._compact(reason, summarize, mode, tokens_before)
        finally:
            conv.context.compacting = False

    async def _compact(
        self,
        reason: str,
        summarize: Summarizer | None,
        mode: RunMode,
        tokens_before: int | None,
    ) -> cx.CompactionResult:
        conv = self.conversation
        settings = conv.settings
        old, kept = cx.split_history(conv.messages, settings.compact_keep_turns)
        if not old or not cx.assistant_indices(old):
            raise cx.CompactionError("nothing to compact yet: the history has no earlier turns")
        pool = conv.pool(mode)
        before = tokens_before or await self.request_tokens(conv.build_request(pool))
        limit_chars = int(conv.context_window() * cx.SUMMARY_INPUT_SHARE * cx.CHARS_PER_TOKEN)
        request = ModelRequest(
            model=settings.model,
            max_tokens=min(settings.max_tokens, settings.compact_summary_tokens),
            system=[text_block(cx.SUMMARY_SYSTEM)],
            tools=[],
            messages=cx.summary_request_messages(cx.render_for_summary(old, limit_chars)),
            temperature=settings.temperature,
        )
        conv.transcript.write("compaction_start", reason=reason, tokens=before)
        try:
            response = await (summarize or self._summarize)(request)
        except ModelError as exc:
            conv.transcript.write("compaction_failed", reason=reason, error=str(exc))
            raise cx.CompactionError(f"the summary request failed: {exc}") from exc
        conv.accounting.charge(response.model or request.model, response.usage)
        conv.transcript.write(
            "usage", turn=conv.turns, usage=response.usage.to_dict(), purpose="compaction"
        )
        summary = "".join(texts_of(response.content)).strip()
        conv.discovered |= discovered_tool_names(conv.messages)
        files = cx.load_instruction_files(conv.config.workspace.roots)
        pinned = self._pinned(files)
        latest = conv.last_prompt if not cx.user_prompts(kept) else None
        conv.context.compactions += 1
        pinned.append(
            cx.summary_block(summary, cx.files_touched(old), latest, conv.context.compactions)
        )
        messages_before = len(conv.messages)
        conv.messages = cx.compacted_history(pinned, kept)
        conv.context.stub_boundary = 0
        after = await self.request_tokens(conv.build_request(pool))
        result = cx.CompactionResult(
            reason=reason,
            before_tokens=before,
            after_tokens=after,
            messages_before=messages_before,
            messages_after=len(conv.messages),
            summarized_messages=len(old),
            kept_turns=len(cx.assistant_indices(kept)),
            instruction_files=[str(p) for p, _ in files],
            staged_paths=conv.staged_paths(),
            summary=summary,
        )
        conv.context.last_compaction = result
        conv.transcript.write(
            "compaction",
            **result.to_dict(),
            number=conv.context.compactions,
            messages=conv.messages,
        )
        conv.on_change()  # the history changed: save it
        return result

    def _pinned(self, files: list[tuple[Path, str]]) -> list[TextBlockParam]:
        conv = self.conversation
        instructions = cx.instructions_block(files) if conv.config.pin_instruction_files else None
        todos = todos_block(conv.todos)
        return [
            block
            for block in (instructions, cx.staged_edits_block(conv.changes), todos)
            if block is not None
        ]

    async def _summarize(self, request: ModelRequest) -> ModelResponse:
        return await self.conversation.client.stream(request, ignore_text)
