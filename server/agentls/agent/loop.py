"""The agent loop: stream a turn, run its tools, send the results back, repeat.

Stops on a turn without tool use (`end_turn`), a refusal, max turns, cancellation or a
persistent API failure. Every `tool_use` that reaches the history gets exactly one
`tool_result`, whatever happens, so a session can always be continued.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, TypeVar

from agentls.agent.context import RunMode
from agentls.agent.events import (
    EventSink,
    Notice,
    Retrying,
    RunFinished,
    RunStarted,
    RunStatus,
    TextDelta,
    TurnUsage,
)
from agentls.agent.model_client import ModelError, ModelRequest, ModelResponse
from agentls.agent.orchestration import run_tool_calls
from agentls.agent.pipeline import Pipeline, ToolCall, ToolCallResult
from agentls.agent.usage import Usage

if TYPE_CHECKING:
    from agentls.agent.session import AgentSession, RunResult

log = logging.getLogger(__name__)
T = TypeVar("T")

CONTINUE_PROMPT = (
    "Your previous response was cut off at the output token limit. "
    "Continue exactly where you stopped, without repeating yourself."
)
REFUSAL_RESULT = "Not run: the response that requested this call ended in a refusal."


class RunCancelled(Exception):
    pass


class AgentLoop:
    """One run of a session; `run()` returns the `RunResult` and never raises for API errors."""

    def __init__(
        self, session: AgentSession, events: EventSink, mode: RunMode, cancel: asyncio.Event
    ):
        self.session = session
        self.events = events
        self.mode = mode
        self.cancel = cancel
        self.pool = session.pool(mode)
        self.pipeline = Pipeline(
            self.pool, session.config.permissions, session.config.hooks, self._emit_safe
        )
        self.ctx = session.tool_context(mode, cancel)
        self.usage = Usage()
        self.turns = 0
        self.text_parts: list[str] = []
        self.notices: list[str] = []
        self.continuations = 0

    def _emit_safe(self, event: Any) -> None:
        """A host's broken event handler must not break the run."""
        try:
            self.events(event)
        except Exception:
            log.exception("event handler failed for %s", type(event).__name__)

    async def run(self, prompt: str) -> RunResult:
        session = self.session
        session.runs += 1
        session.transcript.write("run_start", run=session.runs, prompt=prompt, mode=self.mode)
        self._emit_safe(RunStarted(session.id, prompt))
        session.add_user_content([{"type": "text", "text": prompt}])
        status: RunStatus
        error: str | None = None
        try:
            status = await self._turns()
        except RunCancelled:
            status = "cancelled"
        except ModelError as exc:
            status, error = "failed", str(exc)
        except asyncio.CancelledError:
            status = "cancelled"
        return self._finish(status, error)

    async def _turns(self) -> RunStatus:
        while self.turns < self.session.settings.max_turns:
            self.turns += 1
            self.session.turns += 1
            response = await self._request()
            status = await self._handle(response)
            if status is not None:
                return status
        self._notice(f"Stopped after the maximum of {self.session.settings.max_turns} turns.")
        return "max_turns"

    async def _request(self) -> ModelResponse:
        request = self.session.build_request(self.pool)
        self.session.record_request(self.session.runs, request)
        response = await self._stream_with_retries(request)
        self.usage.add(response.usage)
        self.session.usage.add(response.usage)
        self.session.transcript.write(
            "usage",
            turn=self.turns,
            usage=response.usage.to_dict(),
            stop_reason=response.stop_reason,
        )
        self._emit_safe(
            TurnUsage(self.session.id, self.turns, response.usage.to_dict(), response.stop_reason)
        )
        return response

    async def _handle(self, response: ModelResponse) -> RunStatus | None:
        """Apply one response to the history; a status means the run is over."""
        self.session.add_assistant(response.content)
        calls = [
            ToolCall(str(b["id"]), str(b["name"]), _as_dict(b.get("input")))
            for b in response.content
            if b.get("type") == "tool_use"
        ]
        texts = [str(b.get("text", "")) for b in response.content if b.get("type") == "text"]
        if response.stop_reason == "refusal":
            self._add_results([ToolCallResult(c.id, REFUSAL_RESULT, True) for c in calls])
            self.text_parts = texts
            return "refused"
        if calls:
            self.text_parts = texts
            self._add_results(await run_tool_calls(calls, self.pipeline, self.ctx))
            if self.cancel.is_set():
                raise RunCancelled
            return None
        self.text_parts.extend(texts)
        if response.stop_reason == "pause_turn":
            return None
        if response.stop_reason == "max_tokens":
            return self._continue_after_max_tokens()
        return "completed"

    def _continue_after_max_tokens(self) -> RunStatus | None:
        if self.continuations >= self.session.settings.max_continuations:
            self._notice("The answer hit the output token limit and may be incomplete.")
            return "completed"
        self.continuations += 1
        self._notice("The answer hit the output token limit; asking the model to continue.")
        self.session.add_user_content([{"type": "text", "text": CONTINUE_PROMPT}])
        return None

    def _add_results(self, results: list[ToolCallResult]) -> None:
        if not results:
            return
        for result in results:
            self.session.transcript.write(
                "tool_result",
                tool_use_id=result.tool_use_id,
                is_error=result.is_error,
                duration_ms=round(result.duration_ms, 2),
                content=result.content,
            )
        self.session.add_user_content([r.to_block() for r in results])

    async def _stream_with_retries(self, request: ModelRequest) -> ModelResponse:
        settings = self.session.settings
        attempt = 0
        while True:
            try:
                return await self._until_cancelled(
                    self.session.client.stream(request, self._on_text)
                )
            except ModelError as exc:
                if not exc.transient or attempt >= settings.max_retries:
                    raise
                attempt += 1
                delay = backoff_delay(
                    attempt, settings.retry_base_delay, settings.retry_max_delay, exc.retry_after
                )
                log.warning("model request failed (%s); retry %d in %.2fs", exc, attempt, delay)
                self.session.transcript.write(
                    "retry", attempt=attempt, delay_s=round(delay, 3), error=str(exc)
                )
                self._emit_safe(Retrying(self.session.id, attempt, delay, str(exc)))
                await self._until_cancelled(asyncio.sleep(delay))

    def _on_text(self, text: str) -> None:
        self._emit_safe(TextDelta(self.session.id, text))

    async def _until_cancelled(self, awaitable: Awaitable[T]) -> T:
        """Await something, abandoning it promptly if the run is cancelled."""
        if self.cancel.is_set():
            if asyncio.iscoroutine(awaitable):
                awaitable.close()
            raise RunCancelled
        task = asyncio.ensure_future(awaitable)
        waiter = asyncio.ensure_future(self.cancel.wait())
        try:
            await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()
        if task.done():
            return task.result()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
        raise RunCancelled

    def _notice(self, message: str) -> None:
        self.notices.append(message)
        self.session.transcript.write("notice", message=message)
        self._emit_safe(Notice(self.session.id, message))

    def _finish(self, status: RunStatus, error: str | None) -> RunResult:
        from agentls.agent.session import RunResult

        session = self.session
        text = "".join(self.text_parts).strip()
        session.transcript.write(
            "run_end", status=status, turns=self.turns, usage=self.usage.to_dict(), error=error
        )
        result = RunResult(
            session.id,
            status,
            text,
            self.usage,
            self.turns,
            session.transcript.path,
            error,
            tuple(self.notices),
        )
        self._emit_safe(
            RunFinished(
                session.id,
                status,
                text,
                self.usage.to_dict(),
                self.turns,
                error,
                str(result.transcript),
            )
        )
        return result


def backoff_delay(attempt: int, base: float, cap: float, retry_after: float | None) -> float:
    """Exponential backoff with jitter; a server's retry-after is honoured but capped."""
    delay = min(cap, base * 2.0 ** (attempt - 1)) * random.uniform(0.8, 1.2)
    if retry_after is not None:
        delay = max(delay, min(retry_after, cap))
    return min(delay, cap)


def _as_dict(value: object) -> dict[str, Any]:
    return dict(value) if isinstance(value, dict) else {}
